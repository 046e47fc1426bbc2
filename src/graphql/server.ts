import type { IncomingMessage } from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import { PothosValidationError } from '@pothos/core';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { WebSocket } from 'ws';
import type { ValidationContext } from 'graphql';
import { schema } from './schema.js';
import { auditMutations } from './audit-mutations.js';
import type { AppDeps, ServiceContext } from '../context.js';
import { AppError, ERROR_STATUS } from '../errors.js';
import { graphiqlEnabled, renderLocalGraphiQL } from './graphiql.js';
import { CLOSE_SESSION_ENDED, rememberCredentials } from './live-access.js';
import { useAnonymousIntrospection, useJsonOperationsOnly, useNodesLimit } from './request-rules.js';

/** `nodes(ids:)` looks up every id: a bound on the work one field can ask for. */
export const MAX_NODES_IDS = 100;
import { refuseMalformedInput } from './refuse-malformed-input.js';
import { useCompiledExecute } from './execute-engine.js';
import { databaseUnavailableError } from '../db/unavailable.js';

export interface YogaServerContext {
  req?: IncomingMessage;
  /** Set for websocket operations: graphql-ws's connection_init payload. */
  connectionParams?: Record<string, unknown>;
  /** Set for websocket operations: the socket, closed when its session ends. */
  socket?: WebSocket;
}

export interface GraphQLServerOptions {
  deps: AppDeps;
  buildContext: (headers: Headers, req?: IncomingMessage) => Promise<ServiceContext>;
  plugins: Plugin[];
}

/** Expected failures keep their message and code; anything else is masked by yoga. */
function maskError(error: unknown, message: string): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof AppError) {
    return new GraphQLError(original.message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: original.code, ...(original.details ? { details: original.details } : {}) },
    });
  }
  // Bad arguments caught by Pothos (a malformed cursor or global id, a negative `first`) are the client's.
  if (original instanceof PothosValidationError) {
    return new GraphQLError(original.message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  // A GraphQL-level refusal wrapping another (a variable of the wrong type, a value a scalar refused): the client's.
  if (error instanceof GraphQLError && original instanceof GraphQLError) {
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { ...error.extensions, code: error.extensions.code ?? 'BAD_USER_INPUT' },
    });
  }
  if (error instanceof GraphQLError && !error.originalError) return error;
  // The database out of reach: 503 and Retry-After over HTTP (yoga reads and strips `http`), the code everywhere.
  const unavailable = databaseUnavailableError(original);
  if (unavailable) {
    const retryAfterSeconds = unavailable.retryAfterSeconds;
    return new GraphQLError(unavailable.message, {
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: unavailable.code, retryAfterSeconds, http: { status: 503, headers: { 'retry-after': String(retryAfterSeconds) } } },
    });
  }
  return new GraphQLError(message, { extensions: { code: 'INTERNAL' } });
}

/** Whether an error yoga reports is the client's mistake (logged below `error`) rather than ours. */
export function isClientMistake(error: unknown): boolean {
  if (!(error instanceof GraphQLError)) return false;
  const status = (error.extensions.http as { status?: number } | undefined)?.status;
  if (typeof status === 'number') return status < 500;
  const original = error.originalError;
  if (!original) return error.extensions.code !== 'INTERNAL';
  if (original instanceof AppError) return ERROR_STATUS[original.code] < 500;
  if (original instanceof PothosValidationError) return true;
  return isClientMistake(original);
}

/** Websocket clients send `{ authorization: 'Bearer …' }` in connection_init; headers of the upgrade work too. */
export function headersForSocket(connectionParams: Record<string, unknown> | undefined, req: IncomingMessage | undefined): Headers {
  const headers = new Headers();
  const cookie = req?.headers.cookie;
  if (cookie) headers.set('cookie', cookie);
  const fromUpgrade = req?.headers.authorization;
  if (fromUpgrade) headers.set('authorization', fromUpgrade);
  const params = connectionParams ?? {};
  const fromParams = params.authorization ?? params.Authorization ?? (params.headers as Record<string, unknown> | undefined)?.authorization;
  if (typeof fromParams === 'string') headers.set('authorization', fromParams);
  else if (typeof params.token === 'string') headers.set('authorization', `Bearer ${params.token}`);
  return headers;
}

/**
 * graphql-armor's default is to throw out of validate(): over HTTP that answered 200 without an error code,
 * and over the websocket it escaped onSubscribe and closed the whole socket (4500). Reporting through the
 * validation context makes a limit like any other validation error (400, GRAPHQL_VALIDATION_FAILED).
 */
const reportAsValidationError = {
  propagateOnRejection: false,
  onReject: [
    (context: ValidationContext | null, error: GraphQLError) => {
      if (!context) throw error;
      context.reportError(error);
    },
  ],
};

export function createGraphQLServer({ deps, buildContext, plugins }: GraphQLServerOptions): YogaServerInstance<YogaServerContext, ServiceContext> {
  const { env } = deps;
  return createYoga<YogaServerContext, ServiceContext>({
    // Every mutation field executed leaves one audit entry (graphql/audit-mutations.ts).
    schema: auditMutations(schema),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: graphiqlEnabled(env) ? { title: 'Perimeter GraphQL', subscriptionsProtocol: 'WS' } : false,
    renderGraphiQL: renderLocalGraphiQL,
    // CORS is decided once for every route by src/http/cors.ts, before yoga sees the request.
    cors: false,
    maskedErrors: { maskError },
    logging: {
      debug: (...args) => deps.log.debug({ args }, 'yoga'),
      info: (...args) => deps.log.info({ args }, 'yoga'),
      warn: (...args) => deps.log.warn({ args }, 'yoga'),
      // Yoga reports client mistakes (bad variables, refused ids) here too: those are not our errors.
      error: (...args) => (args.every(isClientMistake) ? deps.log.debug({ args }, 'yoga') : deps.log.error({ args }, 'yoga')),
    },
    context: async ({ request, req, connectionParams, socket }) => {
      const headers = connectionParams ? headersForSocket(connectionParams, req) : request.headers;
      const ctx = await buildContext(headers, req);
      // Subscriptions re-check these credentials on each event (live-access.ts); a socket whose session ended is closed.
      rememberCredentials(ctx, { headers, onSignedOut: socket ? () => socket.close(CLOSE_SESSION_ENDED, 'Session ended') : undefined });
      return ctx;
    },
    plugins: [
      // Depth, alias, cost and token limits, checked at validation: before any resolver, over HTTP and websocket.
      EnvelopArmorPlugin({
        maxDepth: { n: env.GRAPHQL_MAX_DEPTH, ignoreIntrospection: true, exposeLimits: true, ...reportAsValidationError },
        // allowList [] : armor exempts `__typename` aliases by default, so `a1: __typename … a9999: __typename` went uncounted.
        maxAliases: { n: env.GRAPHQL_MAX_ALIASES, allowList: [], exposeLimits: true, ...reportAsValidationError },
        costLimit: { maxCost: env.GRAPHQL_MAX_COST, exposeLimits: true, ...reportAsValidationError },
        maxTokens: { n: 5000, exposeLimits: true },
        maxDirectives: { n: 50, exposeLimits: true, ...reportAsValidationError },
        blockFieldSuggestion: { enabled: env.NODE_ENV === 'production' },
      }),
      useJsonOperationsOnly(),
      // Unset: anonymous introspection except in production (signed-in users may always introspect).
      useAnonymousIntrospection(env.GRAPHQL_INTROSPECTION ?? env.NODE_ENV !== 'production'),
      useNodesLimit(MAX_NODES_IDS),
      useCompiledExecute(env.GRAPHQL_COMPILE_AFTER),
      refuseMalformedInput(),
      ...plugins,
    ],
  });
}
