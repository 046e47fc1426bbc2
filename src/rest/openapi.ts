import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import { restRouter } from './router.js';
import { errorSchema } from './schemas.js';
import type { RestMeta } from './trpc.js';

export const REST_PREFIX = '/api/v1';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** What each status means when an operation does not say more. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: `details` names each field (also a body that is not a JSON object, nests too deep or holds a NUL character)',
  401: 'Authentication required, or the credentials are not valid',
  403: 'Signed in, but not allowed to do this',
  404: 'No such resource, or not one the caller can see (a workspace named by X-Workspace-Id included)',
  409: 'Conflicts with the current state',
  413: 'The request body is larger than the limit',
  415: 'The request body is not JSON',
  429: 'Too many attempts: retry after Retry-After seconds',
  500: 'Internal server error',
};

/** How each kind of operation authenticates (rest/procedures.ts sets the kind). */
const SECURITY: Record<NonNullable<RestMeta['access']>, Record<string, string[]>[]> = {
  public: [],
  signedIn: [{ bearerAuth: [] }],
  admin: [{ bearerAuth: [] }],
  workspace: [{ bearerAuth: [] }],
  toolKey: [{ toolApiKey: [] }],
};

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    // Browsers may send the session cookie the sign-in routes set instead; it is not declared as a scheme
    // because a document's readers (clients, Swagger UI) cannot set cookies: they send the token.
    description: 'A session token from sign-in or sign-up, or a personal API token (`prm_…`). Browsers may rely on the session cookie instead.',
  },
  toolApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Tool-Api-Key',
    description: "A tool's API key (`ptk_…`), from POST /api/tools/{id}/api-key/rotate. `Authorization: Bearer ptk_…` is accepted too.",
  },
} as const;

/** Headers a security scheme already declares: not repeated as parameters. */
const CREDENTIAL_HEADERS = new Set(['x-tool-api-key', 'authorization']);

type Response = { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> };
type Operation = {
  security?: unknown;
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
  responses: Record<string, Response>;
};

function metaByOperation(): Map<string, RestMeta> {
  const metas = new Map<string, RestMeta>();
  for (const procedure of Object.values(restRouter._def.procedures)) {
    const meta = (procedure as unknown as { _def: { meta?: RestMeta } })._def.meta;
    if (meta?.openapi) metas.set(`${meta.openapi.method.toLowerCase()} ${meta.openapi.path}`, meta);
  }
  return metas;
}

/** The statuses an operation answers besides its success, from what it is (its kind, its body, its path) and what it declares. */
function errorStatuses(method: string, path: string, meta: RestMeta, declared: number[]): number[] {
  const statuses = new Set<number>([400, 500, ...declared]);
  if (meta.access !== 'public') statuses.add(401).add(403);
  else statuses.delete(401), statuses.delete(403);
  if (meta.access === 'workspace' || path.includes('{')) statuses.add(404);
  if (method !== 'get') statuses.add(413).add(415);
  for (const status of Object.keys(meta.errors ?? {})) statuses.add(Number(status));
  return [...statuses].sort((a, b) => a - b);
}

/** One operation as the service answers it: its real success status, its errors in the one error shape, its security. */
function reviseOperation(method: string, path: string, operation: Operation, meta: RestMeta): void {
  const success = meta.successStatus ?? 200;
  const ok = operation.responses['200'];
  const revised: Record<string, Response> = {};
  if (ok) revised[String(success)] = { ...ok, description: success === 201 ? 'Created' : ok.description };
  // A download (modules/exports/route.ts): the same 200 in every format it writes, as an attachment.
  if (ok && meta.download) {
    revised[String(success)] = {
      description: meta.download.description,
      headers: { 'Content-Disposition': { description: 'attachment; filename="perimeter-<workspace>-<what>-<YYYY-MM-DD>.<ext>"', schema: { type: 'string' } } },
      content: { ...ok.content, ...meta.download.content },
    };
  }
  // A raw upload (modules/templates/import-route.ts): the body is the file itself, in one of its media types.
  if (meta.upload) operation.requestBody = { required: true, description: meta.upload.description, content: meta.upload.content };
  // The generator's defaults are not carried over: only what the operation itself declares.
  const declared = Object.keys(meta.openapi?.errorResponses ?? {}).map(Number);
  for (const status of errorStatuses(method, path, meta, declared)) {
    const own = (meta.errors as Record<number, string> | undefined)?.[status] ?? (meta.openapi?.errorResponses as Record<number, string> | undefined)?.[status];
    revised[String(status)] = {
      description: own ?? ERROR_DESCRIPTIONS[status] ?? 'Error',
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: ERROR_REF } },
    };
  }
  operation.responses = revised;
  operation.security = SECURITY[meta.access ?? 'signedIn'];
  if (operation.parameters) operation.parameters = operation.parameters.filter((p) => !(p.in === 'header' && CREDENTIAL_HEADERS.has(p.name.toLowerCase())));
}

/**
 * The OpenAPI 3 document of the REST facade. The generator knows tRPC's error shapes and its own defaults;
 * each operation is revised to what the service really answers (rest/procedures.ts and the procedure's meta).
 */
export function buildOpenApiDocument(baseUrl = 'http://localhost:3000'): OpenAPIObject {
  const document = generateOpenApiDocument(restRouter, {
    title: 'Perimeter REST API',
    description:
      'Attack surface management. Authenticate with `Authorization: Bearer <token>` (a session token from sign-in, or a personal API token `prm_…`) or the session cookie. ' +
      'Workspace-scoped routes read the workspace from the `X-Workspace-Id` header (or a `wid` cookie). Every error answers the one `Error` shape.',
    version: '1.0',
    baseUrl: `${baseUrl}${REST_PREFIX}`,
    securitySchemes: SECURITY_SCHEMES as never,
    defs: { Error: errorSchema },
  });
  const metas = metaByOperation();
  for (const [path, pathItem] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem as Record<string, Operation>)) {
      const meta = metas.get(`${method} ${path}`);
      if (meta) reviseOperation(method, path, operation, meta);
    }
  }
  // The generator's own error schemas (error.BAD_REQUEST, …) are replaced by Error everywhere.
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  return document;
}

export { z };
