import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphiQLOptions } from 'graphql-yoga';
import type { Env } from '../env.js';

/**
 * GraphiQL served from the @graphql-yoga/graphiql package, like the REST docs page from swagger-ui-dist: yoga's
 * own page loads its scripts from unpkg.com, which leaves it blank without internet (and trusts a CDN with a
 * page that holds the user's session).
 */
export const GRAPHIQL_ASSETS_PREFIX = '/graphql/assets/';

/** GRAPHIQL switches it; unset, it is on except in production (a console for anyone who finds the URL). */
export const graphiqlEnabled = (env: Pick<Env, 'GRAPHIQL' | 'NODE_ENV'>) => env.GRAPHIQL ?? env.NODE_ENV !== 'production';

const require = createRequire(import.meta.url);
const distDir = join(require.resolve('@graphql-yoga/graphiql/package.json'), '..', 'dist');

/** The files the page loads (the worker file name has two dots in the package). */
const ASSETS = new Set([
  'graphiql.css',
  'yoga-graphiql.umd.js',
  'monacoeditorwork/editor.worker.bundle.js',
  'monacoeditorwork/json.worker.bundle.js',
  'monacoeditorwork/graphql.worker..bundle.js',
]);
const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'application/javascript; charset=utf-8' };

const asset = (file: string) => JSON.stringify(`${GRAPHIQL_ASSETS_PREFIX}${file}`);

/** JSON inside a <script>: `</script>` or `<!--` in a title or default query must not end or comment the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Yoga's GraphiQL page, with every URL on this server. */
export function renderLocalGraphiQL(options: GraphiQLOptions): string {
  const title = options.title ?? 'GraphiQL';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href=${asset('graphiql.css')}></head>
<body id="body" class="no-focus-outline"><noscript>You need to enable JavaScript to run this app.</noscript><div id="root">Loading ${escapeHtml(title)}…</div>
<script>
const workerUrls = { editorWorkerService: ${asset('monacoeditorwork/editor.worker.bundle.js')}, json: ${asset('monacoeditorwork/json.worker.bundle.js')}, graphql: ${asset('monacoeditorwork/graphql.worker..bundle.js')} };
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_id, label) => workerUrls[label] ?? workerUrls.editorWorkerService };
</script>
<script src=${asset('yoga-graphiql.umd.js')}></script>
<script>YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), ${scriptJson(options)});</script>
</body></html>`;
}

/** Serves the page's assets under /graphql/assets/; false for any other path. */
export function serveGraphiQLAssets(path: string, req: IncomingMessage, res: ServerResponse): boolean {
  if (!path.startsWith(GRAPHIQL_ASSETS_PREFIX) || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const file = path.slice(GRAPHIQL_ASSETS_PREFIX.length);
  if (!ASSETS.has(file)) return false;
  res.writeHead(200, { 'content-type': TYPES[file.split('.').pop()!] ?? 'application/octet-stream', 'cache-control': 'public, max-age=86400' });
  if (req.method === 'HEAD') res.end();
  else createReadStream(join(distDir, file)).pipe(res);
  return true;
}
