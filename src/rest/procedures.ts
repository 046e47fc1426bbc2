import { z } from 'zod';
import { isUuid, requireAdmin, requireViewer, requireWorkspaceId } from '../auth/authz.js';
import { NotFoundError } from '../errors.js';
import { inputProblem } from './inspect-input.js';
import { middleware, procedure, type RestContext, type RestMeta } from './trpc.js';

/**
 * The REST edge, defined once. Every module builds its procedures from these, so the order is the same
 * everywhere: who you are (401/403), which workspace (400/404), whether the request is well-formed JSON
 * (400), and only then the operation's own input schema (400 naming the field). tRPC runs middlewares and
 * the input parser in the order they are chained, so the gates sit before `.input()`.
 */

/** `X-Workspace-Id` as the OpenAPI document shows it; workspace-scoped operations put it in `meta.openapi.requestHeaders`. */
export const requestHeaders = z.object({
  'x-workspace-id': z
    .string()
    .optional()
    .meta({ description: 'The workspace to work in (or a `wid` cookie). A value that is not a workspace of yours answers 404.' }),
});

/**
 * The well-formedness checks every operation shares, after the gates (so anonymous callers get 401 whatever
 * they sent). The body's shape and depth were inspected as sent (handler.ts); the input is the body, query
 * string and path parameters.
 */
async function inspectInput(ctx: RestContext, meta: RestMeta | undefined, getRawInput: () => Promise<unknown>): Promise<void> {
  const problem = ctx.bodyProblem ?? inputProblem(await getRawInput(), { textCheckedBy: meta?.textCheckedBy });
  if (problem) throw problem;
}

/** The checks alone, for a procedure with a gate of its own (a tool's API key): it chains `.use(gate).use(inspectRequest)`. */
export const inspectRequest = middleware(async ({ ctx, meta, getRawInput, next }) => {
  await inspectInput(ctx, meta, getRawInput);
  return next();
});

// Each kind's gates and checks run as ONE middleware: tRPC copies its options and context at every
// middleware it chains, which cost a list request more than its gates did.

const signedInEdge = middleware(async ({ ctx, meta, getRawInput, next }) => {
  requireViewer(ctx.svc);
  await inspectInput(ctx, meta, getRawInput);
  return next();
});

const adminEdge = middleware(async ({ ctx, meta, getRawInput, next }) => {
  requireAdmin(ctx.svc);
  await inspectInput(ctx, meta, getRawInput);
  return next();
});

/** The workspace named by X-Workspace-Id (or the wid cookie) goes into context; an id that cannot exist is a 404, as for any other stranger's workspace. */
const workspaceEdge = middleware(async ({ ctx, meta, getRawInput, next }) => {
  requireViewer(ctx.svc);
  const workspaceId = requireWorkspaceId(ctx.svc);
  if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
  await inspectInput(ctx, meta, getRawInput);
  return next({ ctx: { workspaceId } });
});

/** No authentication (sign-up, sign-in, public metadata). */
export const publicProcedure = procedure.meta({ access: 'public' }).use(inspectRequest);
/** Any signed-in caller (a session or a personal API token). */
export const signedInProcedure = procedure.meta({ access: 'signedIn' }).use(signedInEdge);
/** Instance administrators only: anonymous callers get 401 and users 403, whatever they sent. */
export const adminProcedure = procedure.meta({ access: 'admin' }).use(adminEdge);
/** Signed in and scoped to the workspace of X-Workspace-Id: `ctx.workspaceId` is a well-formed id. */
export const workspaceProcedure = procedure.meta({ access: 'workspace' }).use(workspaceEdge);
