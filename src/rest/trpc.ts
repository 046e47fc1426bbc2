import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ServiceContext } from '../context.js';
import type { AppError } from '../errors.js';

export interface RestContext {
  svc: ServiceContext;
  /** The request's headers, for the few operations that hand them to the auth library. */
  headers: Headers;
  /**
   * Why the JSON body is refused before any schema sees it (not an object, too deep, a NUL character), found
   * by the handler while the body is as sent: the input is the body spread into an object with the path's
   * parameters (turning `[]` into `{}`). The edge middleware raises it after the gates (procedures.ts), so
   * anonymous callers still get 401 first.
   */
  bodyProblem?: AppError;
}

/** Who may call an operation; set by the procedures of rest/procedures.ts, read by the OpenAPI document. */
export type RestAccess = 'public' | 'signedIn' | 'admin' | 'workspace' | 'toolKey';

/**
 * `successStatus` lets a procedure answer 201 on creation, as OASM's NestJS routes do. `errors` names the
 * statuses an operation answers beyond the ones every operation of its kind may (409 when it can conflict,
 * 429 when it is rate limited), with what they mean there; the OpenAPI document lists them.
 */
export type RestMeta = OpenApiMeta<{
  successStatus?: number;
  access?: RestAccess;
  errors?: Partial<Record<409 | 429, string>>;
  /** Body fields whose text the service checks itself, NUL characters included, naming line and column. */
  textCheckedBy?: string[];
  /**
   * Served as a file download by a route of its own (the procedure only documents it): the media types its 200
   * answers besides JSON, with their schemas, and the Content-Disposition header it sends.
   */
  download?: { description: string; content: Record<string, { schema: Record<string, unknown> }> };
  /**
   * Takes a raw (non-JSON) request body and is served by a route of its own (the procedure only documents it):
   * the media types the body may have, with their schemas.
   */
  upload?: { description: string; content: Record<string, { schema: Record<string, unknown> }> };
}>;

const t = initTRPC.context<RestContext>().meta<RestMeta>().create({
  // Never leak stack traces. Errors never reach tRPC's own shapes: the REST handler answers every failure
  // with our error body (rest/error-body.ts).
  isDev: false,
});

export const router = t.router;
/**
 * The bare procedure: modules build on rest/procedures.ts instead, which puts the gates before the input.
 * Every mutation is audited by the REST handler (handler.ts), around the whole call, so a write refused by a
 * gate (401, 403) or by its input (400) is recorded with its error code as well as a successful one.
 */
export const procedure = t.procedure;
export const middleware = t.middleware;
export { TRPCError };
