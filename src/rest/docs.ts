import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';

const require = createRequire(import.meta.url);
const swaggerDir = join(require.resolve('swagger-ui-dist/package.json'), '..');
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);
const TYPES: Record<string, string> = { css: 'text/css', js: 'application/javascript', png: 'image/png' };

const page = (specUrl: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Perimeter REST API</title>
<link rel="stylesheet" href="/api/v1/docs/swagger-ui.css"><link rel="icon" href="/api/v1/docs/favicon-32x32.png"></head>
<body><div id="ui"></div><script src="/api/v1/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#ui', persistAuthorization: true });</script>
</body></html>`;

/** The human docs page at /api/v1/docs, served from the swagger-ui-dist package: no CDN needed. */
export function serveDocs(path: string, req: IncomingMessage, res: ServerResponse): boolean {
  if (path === '/api/v1/docs' || path === '/api/v1/docs/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page('/api/v1/openapi.json'));
    return true;
  }
  const asset = path.startsWith('/api/v1/docs/') ? path.slice('/api/v1/docs/'.length) : '';
  if (!ASSETS.has(asset) || !existsSync(join(swaggerDir, asset))) return false;
  res.writeHead(200, { 'content-type': TYPES[asset.split('.').pop()!] ?? 'application/octet-stream', 'cache-control': 'public, max-age=86400' });
  createReadStream(join(swaggerDir, asset)).pipe(res);
  void req;
  return true;
}
