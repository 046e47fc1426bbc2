/**
 * Loopback-only HTTP server used by the nuclei engine tests. Listens on 127.0.0.1, port 0.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

export interface LoggedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  baseUrl: string;
  port: number;
  log: LoggedRequest[];
  hits(path: string): number;
  close(): Promise<void>;
}

/** Bytes that are not valid UTF-8 (a tiny fake .ico), to test binary bodies. */
export const FAVICON = Buffer.from([
  0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x10, 0x10, 0xff, 0xfe, 0x80, 0x81, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc, 0x00, 0x7f, 0x41,
  0x42, 0x43, 0xde, 0xad, 0xbe, 0xef,
]);

export const HOME_BODY =
  '<html><head><title>Welcome to Acme Portal</title></head><body>Acme Portal version 2.4.49 ready. Contact: admin@acme.test</body></html>';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export async function startServer(extra: Record<string, Handler> = {}): Promise<TestServer> {
  const log: LoggedRequest[] = [];
  let baseUrl = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '/';
      log.push({ method: req.method ?? '', url, headers: req.headers, body });
      const path = url.split('?')[0];
      const custom = extra[path];
      if (custom) return custom(req, res, body);
      route(req, res, url, path, body, baseUrl);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    port,
    log,
    hits: (p: string) => log.filter((r) => r.url.split('?')[0] === p).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: http.ServerResponse, status: number, body: string | Buffer, headers: Record<string, string | string[]> = {}) {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
}

function route(req: http.IncomingMessage, res: http.ServerResponse, url: string, path: string, body: string, baseUrl: string) {
  const cookie = req.headers.cookie ?? '';
  switch (path) {
    case '/':
      return send(res, 200, HOME_BODY, {
        Server: 'Apache/2.4.49 (Unix)',
        'x-powered-by': 'PHP/7.4.3',
        'Set-Cookie': 'session=abc123; Path=/; HttpOnly',
      });
    case '/admin':
      return send(res, 403, 'Forbidden', { Server: 'Apache/2.4.49 (Unix)' });
    case '/login':
      if (req.method === 'GET') {
        return send(res, 200, '<form method="post"><input type="hidden" name="csrf" value="tok-7f3a9c"><input name="user"></form>');
      }
      if (req.method === 'POST' && body.includes('csrf=tok-7f3a9c') && body.includes('user=admin')) {
        return send(res, 302, 'redirecting', { Location: '/dashboard', 'Set-Cookie': 'auth=ok-admin; Path=/' });
      }
      return send(res, 401, 'bad credentials');
    case '/dashboard':
      if (cookie.includes('auth=ok-admin')) return send(res, 200, 'Welcome back, administrator');
      return send(res, 302, 'login first', { Location: '/login' });
    case '/api/info':
      return send(
        res,
        200,
        JSON.stringify({
          app: { name: 'acme', version: '1.2.3', build: 42 },
          users: [
            { id: 1, name: 'alice' },
            { id: 2, name: 'bob' },
          ],
          enabled: true,
        }),
        { 'Content-Type': 'application/json' },
      );
    case '/api/token':
      return send(res, 200, JSON.stringify({ token: 't0k3n-42' }), { 'Content-Type': 'application/json' });
    case '/api/secret':
      if (req.headers.authorization === 'Bearer t0k3n-42') return send(res, 200, 'secret-data-ok');
      return send(res, 401, 'unauthorized');
    case '/echo':
      return send(res, 200, JSON.stringify({ method: req.method, url, headers: req.headers, body }), { 'Content-Type': 'application/json' });
    case '/favicon.ico':
      return send(res, 200, FAVICON, { 'Content-Type': 'image/x-icon' });
    case '/gzip':
      return send(res, 200, zlib.gzipSync(Buffer.from('compressed secret banner: GZIP-OK')), { 'Content-Encoding': 'gzip', 'Content-Type': 'text/plain' });
    case '/version.txt':
      return send(res, 200, 'Product v2.4.49', { 'Content-Type': 'text/plain' });
    case '/set-cookie':
      return send(res, 200, 'cookie set', { 'Set-Cookie': 'sid=s3cr3t; Path=/' });
    case '/need-cookie':
      if (cookie.includes('sid=s3cr3t')) return send(res, 200, 'cookie ok');
      return send(res, 403, 'no cookie');
    case '/headers':
      return send(res, 200, '{"ok":true}', { 'Content-Type': 'application/json', 'X-Custom-Header': 'Value-123', 'X-Frame-Options': 'DENY' });
    case '/reset':
      req.socket.destroy();
      return;
    case '/offsite':
      return send(res, 302, 'away', { Location: extraOrigin(baseUrl) });
    default:
      if (path.startsWith('/redirect/')) {
        const n = Number(path.slice('/redirect/'.length));
        if (n > 0) return send(res, 302, `hop ${n}`, { Location: `/redirect/${n - 1}` });
        return send(res, 200, 'final destination reached');
      }
      if (path.startsWith('/raw-path')) {
        return send(res, 200, `raw path: ${url}`, { 'Content-Type': 'text/plain' });
      }
      return send(res, 404, 'not found');
  }
}

let otherOrigin = '';
export function setOtherOrigin(origin: string) {
  otherOrigin = origin;
}
function extraOrigin(_baseUrl: string): string {
  return `${otherOrigin}/landing`;
}
