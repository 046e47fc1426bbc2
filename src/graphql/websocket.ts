import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError } from 'graphql';
import type { DocumentNode, ExecutionArgs } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { AppDeps, ServiceContext } from '../context.js';
import type { CorsPolicy } from '../http/cors.js';
import { resolveViewer } from '../modules/accounts/service.js';
import { clientAddress } from '../auth/client-address.js';
import { headersForSocket, type YogaServerContext } from './server.js';
import { CLOSE_SESSION_ENDED } from './live-access.js';

/** Beside graphql-ws's own close codes (4403 Forbidden, 4408 connection_init timeout). */
export const CLOSE_TOO_MANY_CONNECTIONS = 4429;
/** How often an idle socket's credentials are re-checked (events re-check them as they come). */
const SESSION_RECHECK_MS = 60_000;

export interface WebSocketOptions {
  deps: AppDeps;
  cors: CorsPolicy;
}

/**
 * graphql-ws on the same HTTP server and path, through yoga's own pipeline (plugins, limits, context).
 * Browsers send the session cookie with any upgrade, and a websocket has no CORS preflight: the upgrade is
 * refused (403) when its Origin is not allowed. A socket must authenticate in connection_init (token in the
 * payload, or the upgrade's cookie/authorization) within WS_CONNECTION_INIT_TIMEOUT_MS (else 4408; bad
 * credentials: 4403), and one client address holds at most WS_MAX_CONNECTIONS_PER_CLIENT sockets (4429).
 */
export function attachWebSocket(server: Server, yoga: YogaServerInstance<YogaServerContext, ServiceContext>, { deps, cors }: WebSocketOptions) {
  const { env } = deps;
  const wss = new WebSocketServer({
    server,
    path: '/graphql',
    verifyClient: ({ origin, req }: { origin?: string; req: IncomingMessage }, done: (ok: boolean, code?: number, message?: string) => void) => {
      // No Origin: not a browser (servers, CLIs), which cannot be made to send someone else's cookie.
      if (!origin || cors.allows(origin, req.headers.host)) return done(true);
      done(false, 403, 'Origin not allowed');
    },
  });

  const openByClient = new Map<string, number>();
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) => {
    // The same client address as every other limit (X-Forwarded-For only behind TRUST_PROXY).
    const client = clientAddress(req, env);
    const open = (openByClient.get(client) ?? 0) + 1;
    openByClient.set(client, open);
    socket.once('close', () => {
      const left = (openByClient.get(client) ?? 1) - 1;
      if (left > 0) openByClient.set(client, left);
      else openByClient.delete(client);
    });
    if (open > env.WS_MAX_CONNECTIONS_PER_CLIENT) socket.close(CLOSE_TOO_MANY_CONNECTIONS, 'Too many connections from this client');
  });

  type RootValue = { execute: (args: ExecutionArgs) => unknown; subscribe: (args: ExecutionArgs) => unknown };
  type Extra = { socket: WebSocket; request: IncomingMessage; recheck?: NodeJS.Timeout };
  const disposable = useServer<Record<string, unknown>, Extra>(
    {
      connectionInitWaitTimeout: env.WS_CONNECTION_INIT_TIMEOUT_MS,
      // An anonymous socket has nothing to subscribe to: refused at once (4403) rather than held open.
      onConnect: async (ctx) => {
        const headers = headersForSocket(ctx.connectionParams, ctx.extra.request);
        if (!(await resolveViewer(deps, headers))) return false;
        // Sockets that sit idle between events: their credentials are re-checked now and then, too.
        ctx.extra.recheck = setInterval(() => {
          resolveViewer(deps, headers)
            .then((viewer) => {
              if (!viewer) ctx.extra.socket.close(CLOSE_SESSION_ENDED, 'Session ended');
            })
            .catch((error: unknown) => deps.log.warn({ err: error }, 'websocket session re-check failed'));
        }, SESSION_RECHECK_MS);
        ctx.extra.recheck.unref();
        return true;
      },
      onClose: (ctx) => clearInterval(ctx.extra.recheck),
      execute: (args) => (args.rootValue as RootValue).execute(args) as never,
      subscribe: (args) => (args.rootValue as RootValue).subscribe(args) as never,
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          connectionParams: ctx.connectionParams ?? {},
          params,
        });
        // A document that does not parse or validate is answered with an `error` message for this operation;
        // thrown out of onSubscribe it would close the whole socket (4500) and every other subscription on it.
        let document: DocumentNode;
        try {
          document = parse(params.query);
          const errors = validate(schema, document);
          if (errors.length) return errors;
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        // Context (the viewer lookup) only for an operation that passed validation, as over HTTP.
        return {
          schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
      },
    },
    wss,
  );
  return { wss, dispose: () => disposable.dispose() };
}
