import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { z } from 'zod';
import type { ServiceContext } from '../../context.js';
import { isUuid, requireViewer, requireWorkspaceId } from '../../auth/authz.js';
import { AppError, errorBody, NotFoundError } from '../../errors.js';
import { databaseUnavailableError } from '../../db/unavailable.js';
import { sendError } from '../../rest/handler.js';
import { inputProblem } from '../../rest/inspect-input.js';
import { queryInput } from '../../rest/openapi-routes.js';
import { arrayFieldKeys } from '../../rest/input-coercion.js';
import { exportAssets, exportChanges, exportFindings, type ExportDownload } from './service.js';
import { exportAssetsInput, exportFindingsInput } from './schemas.js';
import { exportChangesInput } from '../changes/schemas.js';

/**
 * GET /api/v1/api/vulnerabilities/export, /api/v1/api/assets/export and /api/v1/api/changes/export. tRPC answers a whole JSON value at
 * once, so these are plain node handlers beside the REST handler (as the agent's SSE stream is): the body is
 * written batch by batch, each write waiting for the client to take the previous one. The procedures in the
 * modules' rest.ts declare them for the OpenAPI document only. Errors before the first byte answer the
 * standard error shape with their status; a failure mid-stream cuts the response (an unterminated chunked body,
 * which every HTTP client reports), since the status line is already sent.
 */
const EXPORTS = {
  '/api/v1/api/vulnerabilities/export': { schema: exportFindingsInput, run: exportFindings },
  '/api/v1/api/assets/export': { schema: exportAssetsInput, run: exportAssets },
  '/api/v1/api/changes/export': { schema: exportChangesInput, run: exportChanges },
} as const satisfies Record<string, { schema: z.ZodObject; run: (ctx: ServiceContext, workspaceId: string, input: never) => Promise<ExportDownload> }>;

export type ExportRoute = keyof typeof EXPORTS;

export function isExportRoute(path: string, method: string | undefined): path is ExportRoute {
  return method === 'GET' && Object.hasOwn(EXPORTS, path);
}

export async function serveExport(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, path: ExportRoute): Promise<void> {
  const route = EXPORTS[path];
  let download: ExportDownload;
  try {
    // The REST edge's order (rest/procedures.ts): who you are, which workspace, well-formed input, then the service.
    requireViewer(ctx);
    const workspaceId = requireWorkspaceId(ctx);
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    // The query string as the REST handler reads it: one value as itself, a repeated parameter as a list, and a
    // single value of a list parameter (`?severity=high`) as a list of one.
    const input = { ...queryInput(new URL(req.url ?? '/', 'http://localhost').searchParams, arrayFieldKeys(route.schema)) };
    const problem = inputProblem(input);
    if (problem) throw problem;
    download = await route.run(ctx, workspaceId, input as never);
  } catch (error) {
    const expected = error instanceof AppError ? error : databaseUnavailableError(error);
    if (expected) return sendError(res, errorBody(expected));
    throw error;
  }
  for (const [key, value] of ctx.responseHeaders) res.setHeader(key, key === 'set-cookie' ? ctx.responseHeaders.getSetCookie() : value);
  res.writeHead(200, {
    'content-type': download.contentType,
    'content-disposition': `attachment; filename="${download.filename}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  try {
    // Back-pressure: the next batch is read only once the socket has taken the previous one; a client that goes
    // away ends the read (pipeline returns the generator, which stops querying).
    await pipeline(Readable.from(download.body, { objectMode: false }), res);
  } catch (error) {
    if (res.destroyed && !res.writableFinished && (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    ctx.deps.log.error({ err: error, reqId: ctx.requestId, path }, 'export failed mid-stream');
    res.destroy();
  }
}
