import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Env } from './env.js';
import type { Logger } from './logger.js';
import type { Database } from './db.js';
import { clientAddress } from './auth/client-address.js';
import { createServiceContext, type AppDeps, type ServiceContext } from './context.js';
import { createRuntime } from './runtime.js';
import { startWorkers } from './workers.js';
import { resolveViewer } from './modules/accounts/service.js';
import { createGraphQLServer } from './graphql/server.js';
import { attachWebSocket } from './graphql/websocket.js';
import { preReadGraphQLBody } from './graphql/post-body.js';
import { graphiqlEnabled, serveGraphiQLAssets } from './graphql/graphiql.js';
import { createCorsPolicy } from './http/cors.js';
import { createRestHandler, sendError, toHeaders } from './rest/handler.js';
import { buildOpenApiDocument } from './rest/openapi.js';
import { serveDocs } from './rest/docs.js';
import { createMetrics } from './metrics.js';
import { createReadinessProbe } from './ops/readiness.js';
import { drainListener } from './ops/drain.js';
import { metricsAuthorized } from './ops/metrics-token.js';
import { AppError, errorBody } from './errors.js';
import { databaseUnavailableError } from './db/unavailable.js';
import { LOGO_ROUTE } from './modules/system-configs/service.js';
import { serveSystemLogo } from './modules/system-configs/logo-route.js';
import { AGENT_STREAM_ROUTE, serveAgentStream } from './modules/agents/stream-route.js';
import { createMcpEndpoint } from './modules/mcp/endpoint.js';
import { isExportRoute, serveExport } from './modules/exports/route.js';
import { isTemplateImportRoute, serveTemplateImport } from './modules/templates/import-route.js';

export interface AppOptions {
  env: Env;
  /** An already-open database (tests pass a PGlite loaded from a migrated template). */
  database?: Database;
  /** This process's own database, opening already (see RuntimeOptions.opening). */
  opening?: Promise<Database>;
  /**
   * Whether stop() closes the database (default true). False when the database is shared with another
   * app in the same process (tests running two instances on one database), whose owner closes it.
   */
  ownsDatabase?: boolean;
  log?: Logger;
}

export interface App {
  deps: AppDeps;
  server: Server;
  /** The whole HTTP surface as one node handler (tests call it without a socket). */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  listen(port?: number, host?: string): Promise<string>;
  stop(): Promise<void>;
}

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Builds the whole service: database (migrated), auth, pub/sub, job queue, and the three front doors. */
export async function createApp(options: AppOptions): Promise<App> {
  const { env } = options;
  const runtime = await createRuntime(options);
  const { deps } = runtime;
  const { log, db } = deps;
  // The line logged per request holds only what is written out below (the path without its query string), never
  // a header or a body, so the logger's redaction, which costs about as much as the rest of the line, is skipped.
  const requestLog = log.child({}, { redact: [] });
  if (env.WORKERS) await startWorkers(deps);
  const metrics = createMetrics(deps);
  // /ready must answer at once under load: the database check runs behind it, not in front of it.
  const readiness = createReadinessProbe(() => db.sql.query('SELECT 1'));
  const cors = createCorsPolicy(env);

  async function buildContext(headers: Headers, req?: IncomingMessage): Promise<ServiceContext> {
    return createServiceContext(deps, {
      viewer: await resolveViewer(deps, headers),
      requestId: headers.get('x-request-id') ?? randomUUID(),
      clientIp: req ? clientAddress(req, env) : 'unknown',
      workspaceId: headers.get('x-workspace-id')?.trim() || readCookie(headers.get('cookie'), 'wid') || undefined,
    });
  }

  const yoga = createGraphQLServer({ deps, buildContext, plugins: [metrics.graphqlPlugin] });
  // The auth routes the product needs (sign-up, sign-in, sign-out, get-session, update-user, change-password)
  // are REST procedures with our validation and limits (modules/accounts/rest.ts); the auth library's other
  // routes (list-sessions hands out other sessions' tokens, …) are not served: 404 like any unknown path.
  const rest = createRestHandler({
    bodyLimit: env.BODY_LIMIT_BYTES,
    buildContext,
    onUnexpectedError: (error, procedurePath) => log.error({ err: error, procedure: procedurePath }, 'REST procedure failed'),
    // Outside production, each query's answer is also checked by its zod output schema (rest/served-procedure.ts).
    verifyOutput: env.NODE_ENV !== 'production',
  });
  // Our MCP endpoint (workspace API keys), beside the REST handler: it speaks JSON-RPC and SSE, not tRPC.
  const mcp = createMcpEndpoint(deps);
  let openApiJson: string | undefined;
  /** Shutdown has begun: /ready answers 503 and responses ask clients to close their connection, but requests are still served. */
  let draining = false;
  /** The listener is closing: connections are closed as soon as they are idle. */
  let shuttingDown = false;

  async function route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // Cross-origin headers, preflights and cross-site writes, for every route alike (src/http/cors.ts).
    if (cors.handle(req, res)) return;
    if (path === '/health') return sendJson(res, 200, { status: 'ok' });
    if (path === '/ready') {
      if (draining) return sendJson(res, 503, { status: 'shutting-down', database: db.kind });
      // Redis only carries live events: while it is down they are delayed, so the instance stays ready and says so.
      const redis = runtime.redisHealth();
      if (await readiness.databaseReachable()) return sendJson(res, 200, { status: 'ready', database: db.kind, ...(redis ? { redis } : {}) });
      return sendJson(res, 503, { status: 'unavailable', database: db.kind, ...(redis ? { redis } : {}) });
    }
    if (path === '/metrics') {
      if (!metricsAuthorized(env.METRICS_TOKEN, req.headers.authorization)) {
        res.setHeader('www-authenticate', 'Bearer realm="metrics"');
        return sendError(res, errorBody(new AppError('UNAUTHENTICATED', 'Send Authorization: Bearer <METRICS_TOKEN> to read /metrics')));
      }
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      return void res.end(await metrics.registry.metrics());
    }
    if (path === '/api/v1/openapi.json') {
      openApiJson ??= JSON.stringify(buildOpenApiDocument(env.PUBLIC_URL ?? `http://localhost:${env.PORT}`));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      return void res.end(openApiJson);
    }
    if (serveDocs(path, req, res)) return;
    // The stored logo is bytes, not JSON: served beside the REST handler (which keeps POST for the upload).
    if (path === LOGO_ROUTE && (req.method === 'GET' || req.method === 'HEAD')) return serveSystemLogo(await buildContext(toHeaders(req), req), req, res);
    if (await mcp.handle(req, res, path)) return;
    // The assistant's reply as server-sent events: a stream, which the JSON-only REST handler cannot answer.
    if (path === AGENT_STREAM_ROUTE && req.method === 'POST') return serveAgentStream(await buildContext(toHeaders(req), req), req, res, env.BODY_LIMIT_BYTES);
    // Exports are streamed, batch by batch: a body the JSON-only REST handler cannot write.
    if (isExportRoute(path, req.method)) return serveExport(await buildContext(toHeaders(req), req), req, res, path);
    // A template library arrives as the raw archive, read as it streams in: a body the JSON-only REST handler cannot take.
    if (isTemplateImportRoute(path, req.method)) {
      return serveTemplateImport(await buildContext(toHeaders(req), req), req, res, env.TEMPLATE_IMPORT_MAX_BYTES);
    }
    if (path.startsWith('/api/v1/')) return rest(req, res);
    if (graphiqlEnabled(env) && serveGraphiQLAssets(path, req, res)) return;
    if (path === '/graphql') {
      if (!(await preReadGraphQLBody(req, res, env.BODY_LIMIT_BYTES))) return;
      return void (await yoga.handle(req, res, { req }));
    }
    sendError(res, errorBody(new AppError('NOT_FOUND', `No route ${req.method} ${path}`)));
  }

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.headers['x-request-id'] = requestId;
    res.setHeader('x-request-id', requestId);
    if (draining) res.setHeader('connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    res.on('finish', () => {
      // A response that started before shutdown leaves a keep-alive connection: close it now it is idle.
      if (shuttingDown) setImmediate(() => server.closeIdleConnections());
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observe(req.method ?? 'GET', path, res.statusCode, seconds);
      requestLog.info({ reqId: requestId, method: req.method, path, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    route(req, res, path).catch((error: unknown) => {
      log.error({ err: error, reqId: requestId }, 'unhandled request error');
      const unavailable = databaseUnavailableError(error);
      if (unavailable && !res.headersSent) sendError(res, errorBody(unavailable));
      else if (!res.headersSent) sendJson(res, 500, { statusCode: 500, error: 'Internal Server Error', code: 'INTERNAL', message: 'Internal server error' });
      else res.destroy();
    });
  };

  /** Responses not yet finished: at shutdown they are told to close their connection. */
  const inFlight = new Set<ServerResponse>();
  const server = createServer(handle);
  const socket = attachWebSocket(server, yoga, { deps, cors });

  let stopping: Promise<void> | undefined;
  async function stop(): Promise<void> {
    stopping ??= (async () => {
      // Drain first: /ready turns 503 so load balancers stop sending new requests here, while requests
      // that still arrive (sent before they noticed) are served. Each response asks its client to close
      // its connection, so keep-alive clients move elsewhere. Only then does the listener close.
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      // One bound for the whole shutdown after the drain period: the HTTP side and the workers share it.
      const deadline = Date.now() + env.SHUTDOWN_DRAIN_MS + env.SHUTDOWN_TIMEOUT_MS;
      // Past the bound, cut whatever is left: requests still running, and websockets whose client never
      // answered the close frame (the ws library would otherwise wait 30 s for it).
      const force = setTimeout(() => {
        for (const client of socket.wss.clients) client.terminate();
        server.closeAllConnections();
      }, deadline - Date.now());
      force.unref();
      if (env.SHUTDOWN_DRAIN_MS > 0) {
        log.info({ drainMs: env.SHUTDOWN_DRAIN_MS }, 'draining: /ready answers 503, requests are still served');
        // Waiting for connections to stop arriving takes at most half the shutdown bound: the rest is for closing.
        const drainDeadline = Date.now() + env.SHUTDOWN_DRAIN_MS + env.SHUTDOWN_TIMEOUT_MS / 2;
        await drainListener(server, { drainMs: env.SHUTDOWN_DRAIN_MS, quietMs: Math.min(env.SHUTDOWN_DRAIN_MS, 500), deadline: drainDeadline });
      }
      shuttingDown = true;
      // Stop accepting connections first. Requests in flight finish, on a connection marked to close
      // (a keep-alive connection would otherwise hold server.close() open for keepAliveTimeout).
      const closed = new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      server.closeIdleConnections();
      // 1001 Going Away: clients know to reconnect elsewhere.
      for (const client of socket.wss.clients) client.close(1001, 'Server shutting down');
      await mcp.close();
      await socket.dispose();
      await closed;
      await runtime.close(deadline - Date.now());
      clearTimeout(force);
    })();
    return stopping;
  }

  return {
    deps,
    server,
    handle,
    stop,
    listen: (port = env.PORT, host = env.HOST) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve(`http://${shownHost}:${address.port}`);
        });
      }),
  };
}
