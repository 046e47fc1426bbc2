import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceContext } from '../../context.js';
import { errorBody, NotFoundError } from '../../errors.js';
import { sendError } from '../../rest/handler.js';
import { readStoredLogo } from './service.js';

/**
 * GET/HEAD /api/v1/api/system-configs/logo: the stored logo's bytes, for `<img src>` on login pages, so no
 * account is needed. tRPC answers JSON only, hence a plain node handler. The URL the public metadata gives
 * carries `?v=<version>` (new for every upload): with it the response may be cached for good; without it
 * (or with an old version) caches revalidate through the ETag.
 */
export async function serveSystemLogo(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const logo = await readStoredLogo(ctx);
  if (!logo) return sendError(res, errorBody(new NotFoundError('Logo')), { 'cache-control': 'no-cache' });
  const etag = `"${logo.version}"`;
  const requested = new URL(req.url ?? '/', 'http://localhost').searchParams.get('v');
  const headers = {
    'content-type': logo.contentType,
    etag,
    'cache-control': requested === logo.version ? 'public, max-age=31536000, immutable' : 'public, no-cache',
    // The bytes were checked to be this raster type; never let a browser guess otherwise.
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  };
  const match = req.headers['if-none-match'];
  if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    res.writeHead(304, headers);
    return void res.end();
  }
  res.writeHead(200, { ...headers, 'content-length': String(logo.bytes.length) });
  res.end(req.method === 'HEAD' ? undefined : logo.bytes);
}
