import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ServiceContext } from '../context.js';
import type { AppError } from '../errors.js';
import { toErrorBody } from './error-body.js';
import { auditRestWrite } from './audit-edge.js';

export interface RestContext {
  svc: ServiceContext;
  /** The request's headers, for the few operations that hand them to the auth library. */
  headers: Headers;
  /**
   * Why the JSON body is refused before any schema sees it (not an object, too deep, a NUL character), found
   * by the handler while the body is as sent: trpc-to-openapi spreads it into the input object (turning `[]`
   * into `{}`) and stringifies it (which overflows the stack when it nests thousands deep). The edge
   * middleware raises it after the gates (procedures.ts), so anonymous callers still get 401 first.
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

const t = initTRPC
  .context<RestContext>()
  .meta<RestMeta>()
  .create({
    // Never leak stack traces: the body is our error shape (rest/error-body.ts), nothing else.
    isDev: false,
    errorFormatter: ({ error }) => ({ app: toErrorBody(error) }) as never,
  });

export const router = t.router;
/**
 * Every mutation is audited here, outermost, so a write refused by a gate (401, 403) or by its input (400) is
 * recorded with its error code as well as a successful one. Queries (reads) are not.
 */
const audited = t.middleware(async ({ ctx, type, path, meta, getRawInput, next }) => {
  const result = await next();
  if (type === 'mutation') {
    const rawInput = await getRawInput().catch(() => undefined);
    await auditRestWrite({ ctx, meta, path, rawInput, result: result.ok ? { ok: true, data: result.data } : { ok: false, error: result.error } });
  }
  return result;
});

/** The bare procedure (audited): modules build on rest/procedures.ts instead, which puts the gates before the input. */
export const procedure = t.procedure.use(audited);
export const middleware = t.middleware;
export { TRPCError };
