import type { IncomingMessage, ServerResponse } from 'node:http';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import type { ServiceContext } from '../context.js';
import { AppError, errorBody, type ErrorBody } from '../errors.js';
import { restRouter } from './router.js';
import { REST_PREFIX } from './openapi.js';
import { toErrorBody } from './error-body.js';
import { keepBodyTypesStrict } from './strict-body.js';
import { bodyShapeProblem, inputProblem } from './inspect-input.js';
import { databaseUnavailableError } from '../db/unavailable.js';

type Next = () => void;

/** What handleRest found before the tRPC handler runs, handed to its createContext on the request. */
type PreparedRequest = IncomingMessage & { svc: ServiceContext; restHeaders: Headers; bodyProblem?: AppError };

keepBodyTypesStrict(restRouter._def.procedures);

/** Success status per procedure path (e.g. 201 for creations), read once from the procedures' meta. */
const successStatusByPath = new Map<string, number>();
for (const [path, procedure] of Object.entries(restRouter._def.procedures)) {
  const status = (procedure as unknown as { _def: { meta?: { successStatus?: number } } })._def.meta?.successStatus;
  if (status) successStatusByPath.set(path, status);
}

export function sendError(res: ServerResponse, body: ErrorBody, headers: Record<string, string> = {}): void {
  const retryAfter = body.retryAfterSeconds ? { 'retry-after': String(body.retryAfterSeconds) } : {};
  res.writeHead(body.statusCode, { 'content-type': 'application/json; charset=utf-8', ...retryAfter, ...headers });
  res.end(JSON.stringify(body));
}

/** Any JSON media type (application/json, application/merge-patch+json, …), with or without charset. */
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;

/**
 * Reads a JSON body ourselves (any JSON content type, with or without charset) so that a body that is not
 * JSON, or is too large, gets our error shape; the tRPC handler then takes `req.body` as it is. Unless the
 * caller inspects it later itself, a body that is not an object, nests too deep or holds a NUL is refused here.
 */
export async function readJsonBody(req: IncomingMessage, limit: number, options: { requireJsonType?: boolean; inspectLater?: boolean } = {}): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  // Only a body that is there must say it is JSON: an empty one needs no Content-Type.
  if (options.requireJsonType && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('BAD_REQUEST', 'The request body is not valid JSON');
  }
  const problem = options.inspectLater ? null : (bodyShapeProblem(body) ?? inputProblem(body));
  if (problem) throw problem;
  return body;
}

function hasBody(method: string | undefined): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
}

export interface RestHandlerOptions {
  bodyLimit: number;
  /** The request's context, from its headers (built once per request: the procedures that need them get the same object). */
  buildContext: (headers: Headers, req: IncomingMessage) => Promise<ServiceContext>;
  /** Unexpected failures (masked as 500 for the client) are logged here with their cause. */
  onUnexpectedError: (error: unknown, procedurePath: string | undefined) => void;
}

export function createRestHandler(options: RestHandlerOptions) {
  const openApiHandler = createOpenApiNodeHttpHandler({
    router: restRouter,
    maxBodySize: options.bodyLimit,
    createContext: async ({ req }) => {
      const { svc, restHeaders, bodyProblem } = req as PreparedRequest;
      return { svc, headers: restHeaders, bodyProblem };
    },
    onError: ({ error, path }) => {
      if (toErrorBody(error).statusCode >= 500) options.onUnexpectedError(error.cause ?? error, path);
    },
    responseMeta: ({ paths, errors }) => {
      if (errors.length || !paths?.[0]) return {};
      return { status: successStatusByPath.get(paths[0]) ?? 200 };
    },
  });

  return async function handleRest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const originalUrl = req.url ?? '/';
    try {
      // Always read the body of a method that may have one: a missing or empty body (no Content-Length, or an
      // empty chunked one) is "no input", which body-less operations (rotate, cancel, sign-out) accept.
      if (hasBody(req.method)) {
        const body = await readJsonBody(req, options.bodyLimit, { requireJsonType: true, inspectLater: true });
        // Shape and depth now, while the body is as sent; NUL characters in the edge middleware, which knows the operation.
        const bodyProblem = bodyShapeProblem(body) ?? inputProblem(body, { nul: false });
        // A refused body goes no further (the edge middleware raises the problem once the caller is known).
        Object.assign(req, bodyProblem ? { body: undefined, bodyProblem } : { body });
      }
      const headers = toHeaders(req);
      const svc = await options.buildContext(headers, req);
      Object.assign(req, { svc, restHeaders: headers });
      interceptErrors(res, svc);
      // trpc-to-openapi knows paths as /api/...; the /api/v1 prefix is ours.
      req.url = originalUrl.slice(REST_PREFIX.length) || '/';
      // The JSON body check above is ours; tell the handler the content is JSON whatever the charset.
      if (hasBody(req.method)) req.headers['content-type'] = 'application/json';
      // Paths no procedure serves (the auth library's other routes among them) are 404 like any unknown path.
      await openApiHandler(req, res, (() => {
        req.url = originalUrl;
        sendError(res, errorBody(new AppError('NOT_FOUND', `No route ${req.method} ${originalUrl.split('?')[0]}`)));
      }) as Next);
    } catch (error) {
      if (res.headersSent) return;
      const expected = error instanceof AppError ? error : databaseUnavailableError(error);
      if (expected) sendError(res, errorBody(expected));
      else throw error;
    }
  };
}

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else headers.set(key, value);
  }
  return headers;
}

export { toHeaders };

/**
 * trpc-to-openapi writes errors as `{...errorShape, message, code, issues}`; our errorFormatter put the
 * real body under `app`. Rewrite the response just before it leaves, and apply headers services asked for.
 */
function interceptErrors(res: ServerResponse, svc: ServiceContext): void {
  const end = res.end.bind(res) as (chunk?: unknown, ...rest: unknown[]) => ServerResponse;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (!res.headersSent) {
      for (const [key, value] of svc.responseHeaders) {
        if (key === 'set-cookie') res.setHeader('set-cookie', svc.responseHeaders.getSetCookie());
        else res.setHeader(key, value);
      }
    }
    if (res.statusCode >= 400 && typeof chunk === 'string' && !res.headersSent) {
      try {
        const parsed = JSON.parse(chunk) as { app?: ErrorBody };
        if (parsed.app) {
          res.statusCode = parsed.app.statusCode;
          if (parsed.app.retryAfterSeconds) res.setHeader('retry-after', String(parsed.app.retryAfterSeconds));
          chunk = JSON.stringify(parsed.app);
        }
      } catch {
        // not ours: leave it
      }
    }
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
}
