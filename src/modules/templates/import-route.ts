import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ServiceContext } from '../../context.js';
import { isUuid, requireViewer, requireWorkspaceId } from '../../auth/authz.js';
import { AppError, errorBody, NotFoundError } from '../../errors.js';
import { databaseUnavailableError } from '../../db/unavailable.js';
import { sendError } from '../../rest/handler.js';
import { recordRequestWrite } from '../audit/record.js';
import { archiveFormatOf } from './archive.js';
import { importTemplates } from './import.js';

/**
 * POST /api/v1/api/templates/import: the archive is the raw request body, which the JSON-only REST handler
 * cannot take, so this plain node handler serves it beside the REST handler (as the exports are). The
 * procedure in rest.ts declares it for the OpenAPI document only. The REST edge's order holds: who you are
 * (401), which workspace (400/404), a well-formed request (415 for another media type, 413 for a declared
 * length over the cap), then the service (404/403, then the archive itself as it streams in).
 */
export const TEMPLATE_IMPORT_ROUTE = '/api/v1/api/templates/import';
const OPERATION = 'POST /api/templates/import';

export function isTemplateImportRoute(path: string, method: string | undefined): boolean {
  return method === 'POST' && path === TEMPLATE_IMPORT_ROUTE;
}

function sendJson(res: ServerResponse, ctx: ServiceContext, body: unknown): void {
  for (const [key, value] of ctx.responseHeaders) res.setHeader(key, key === 'set-cookie' ? ctx.responseHeaders.getSetCookie() : value);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

export async function serveTemplateImport(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<void> {
  let outcome = 'success';
  let entityIds: string[] = [];
  try {
    requireViewer(ctx);
    const workspaceId = requireWorkspaceId(ctx);
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    const format = archiveFormatOf(req.headers['content-type']);
    if (!format) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the archive as the request body: application/gzip for a .tar.gz, application/zip for a .zip');
    }
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The archive is larger than ${maxBytes} bytes (TEMPLATE_IMPORT_MAX_BYTES)`);
    }
    // Read through an iterator that leaves `req` open when the import stops early (413, a broken archive):
    // destroying the request would destroy the socket, and the error answer with it.
    const body = Readable.from(req.iterator({ destroyOnReturn: false }));
    const result = await importTemplates(ctx, workspaceId, { format, body });
    // The audit entry names the workspace's templates this import created or changed (capped by the log).
    entityIds = result.files.filter((file) => file.change === 'created' || file.change === 'updated').map((file) => file.templateId!);
    await recordRequestWrite(ctx, { surface: 'rest', operation: OPERATION, entityIds, outcome });
    return sendJson(res, ctx, result);
  } catch (error) {
    const expected = error instanceof AppError ? error : databaseUnavailableError(error);
    outcome = expected ? expected.code : 'INTERNAL';
    // Recorded before the answer leaves, as the REST middleware does, so a client that reads the log next sees it.
    await recordRequestWrite(ctx, { surface: 'rest', operation: OPERATION, entityIds, outcome });
    if (!expected) throw error;
    if (req.readableEnded) return sendError(res, errorBody(expected));
    // The rest of a refused body is dropped as it comes (bounded by the server's request timeout), so the
    // client reads the answer instead of a reset; the connection closes after it.
    sendError(res, errorBody(expected), { connection: 'close' });
    req.resume();
  }
}
