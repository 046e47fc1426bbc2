import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRPCError, type AnyProcedure } from '@trpc/server';
import type { ServiceContext } from '../context.js';
import { AppError, errorBody, type ErrorBody } from '../errors.js';
import { restRouter } from './router.js';
import { buildRouteTable, normalizePath, queryInput, type RestRoute } from './openapi-routes.js';
import { auditRestWrite } from './audit-edge.js';
import { servedProcedure, type ServedProcedure } from './served-procedure.js';
import type { RestContext } from './trpc.js';
import { REST_PREFIX } from './openapi.js';
import { toErrorBody } from './error-body.js';
import { bodyShapeProblem, inputProblem } from './inspect-input.js';
import { databaseUnavailableError } from '../db/unavailable.js';

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
  /** Also run each query's zod output check and compare it with the compiled serializer's answer (development and tests). */
  verifyOutput: boolean;
}

/** Built once: it sets the input schemas' coercion flags, which the procedures share across apps. */
const routes = buildRouteTable(restRouter);

export function createRestHandler(options: RestHandlerOptions) {
  const procedures = new Map<string, ServedProcedure>();
  const served = (route: RestRoute): ServedProcedure => {
    let procedure = procedures.get(route.procedurePath);
    if (!procedure) {
      procedure = servedProcedure(route.procedurePath, (restRouter._def.procedures as unknown as Record<string, AnyProcedure>)[route.procedurePath]!, {
        verifyOutput: options.verifyOutput,
      });
      procedures.set(route.procedurePath, procedure);
    }
    return procedure;
  };
  return async function handleRest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const originalUrl = req.url ?? '/';
    try {
      // Always read the body of a method that may have one: a missing or empty body (no Content-Length, or an
      // empty chunked one) is "no input", which body-less operations (rotate, cancel, sign-out) accept.
      let body: unknown;
      let bodyProblem: AppError | undefined;
      if (hasBody(req.method)) {
        body = await readJsonBody(req, options.bodyLimit, { requireJsonType: true, inspectLater: true });
        // Shape and depth now, while the body is as sent; NUL characters in the edge middleware, which knows the operation.
        bodyProblem = bodyShapeProblem(body) ?? inputProblem(body, { nul: false }) ?? undefined;
        // A refused body goes no further (the edge middleware raises the problem once the caller is known).
        if (bodyProblem) body = undefined;
      }
      const headers = toHeaders(req);
      const svc = await options.buildContext(headers, req);
      // Routes are known as /api/...; the /api/v1 prefix is ours.
      const url = new URL(`http://127.0.0.1${originalUrl.slice(REST_PREFIX.length) || '/'}`);
      const found = routes.match(req.method ?? 'GET', normalizePath(url.pathname));
      // Paths no procedure serves (the auth library's other routes among them) are 404 like any unknown path.
      if (!found) return sendError(res, errorBody(new AppError('NOT_FOUND', `No route ${req.method} ${originalUrl.split('?')[0]}`)));
      const { route, pathInput } = found;
      // Path parameters win over query and body fields of the same name.
      const input = route.noInput ? undefined : { ...(route.inputFromQuery ? queryInput(url.searchParams, route.arrayKeys) : (body as object)), ...pathInput };
      const ctx: RestContext = { svc, headers, bodyProblem };
      const outcome = await served(route)(ctx, input);
      // Every write is audited, refused ones too (401, 403, 400 on its input), before the answer leaves.
      if (route.type === 'mutation') await auditRestWrite({ ctx, meta: route.meta, path: route.procedurePath, rawInput: input, result: outcome });
      if (outcome.ok) return sendProcedureResponse(res, svc, route.successStatus, outcome.json);
      const failure = toErrorBody(outcome.error);
      if (failure.statusCode >= 500)
        options.onUnexpectedError(outcome.error instanceof TRPCError ? (outcome.error.cause ?? outcome.error) : outcome.error, route.procedurePath);
      sendProcedureResponse(res, svc, failure.statusCode, JSON.stringify(failure), failure.retryAfterSeconds);
    } catch (error) {
      if (res.headersSent) return;
      const expected = error instanceof AppError ? error : databaseUnavailableError(error);
      if (expected) sendError(res, errorBody(expected));
      else throw error;
    }
  };
}

/** A procedure's answer or error, with the headers its service asked for (a session cookie on sign-in, …). */
function sendProcedureResponse(res: ServerResponse, svc: ServiceContext, status: number, json: string, retryAfter?: number): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  for (const [key, value] of svc.responseHeaders) {
    if (key === 'set-cookie') res.setHeader('set-cookie', svc.responseHeaders.getSetCookie());
    else res.setHeader(key, value);
  }
  if (retryAfter) res.setHeader('retry-after', String(retryAfter));
  res.end(json);
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
