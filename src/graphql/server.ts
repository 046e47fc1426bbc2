import type { IncomingMessage, Server } from 'node:http';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import { PothosValidationError } from '@pothos/core';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { DocumentNode, ExecutionArgs, ValidationContext } from 'graphql';
import { schema } from './schema.js';
import type { AppDeps, ServiceContext } from '../context.js';
import { AppError } from '../errors.js';
import { databaseUnavailableError } from '../db/unavailable.js';

export interface YogaServerContext {
  req?: IncomingMessage;
  /** Set for websocket operations: graphql-ws's connection_init payload. */
  connectionParams?: Record<string, unknown>;
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
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: { title: 'Perimeter GraphQL', subscriptionsProtocol: 'WS' },
    maskedErrors: { maskError },
    logging: {
      debug: (...args) => deps.log.debug({ args }, 'yoga'),
      info: (...args) => deps.log.info({ args }, 'yoga'),
      warn: (...args) => deps.log.warn({ args }, 'yoga'),
      error: (...args) => deps.log.error({ args }, 'yoga'),
    },
    context: async ({ request, req, connectionParams }) => {
      const headers = connectionParams ? headersForSocket(connectionParams, req) : request.headers;
      return buildContext(headers, req);
    },
    plugins: [
      // Depth, alias, cost and token limits, checked at validation: before any resolver, over HTTP and websocket.
      EnvelopArmorPlugin({
        maxDepth: { n: env.GRAPHQL_MAX_DEPTH, ignoreIntrospection: true, exposeLimits: true, ...reportAsValidationError },
        maxAliases: { n: env.GRAPHQL_MAX_ALIASES, exposeLimits: true, ...reportAsValidationError },
        costLimit: { maxCost: env.GRAPHQL_MAX_COST, exposeLimits: true, ...reportAsValidationError },
        maxTokens: { n: 5000, exposeLimits: true },
        maxDirectives: { n: 50, exposeLimits: true, ...reportAsValidationError },
        blockFieldSuggestion: { enabled: env.NODE_ENV === 'production' },
      }),
      ...plugins,
    ],
  });
}

/** graphql-ws on the same HTTP server and path, through yoga's own pipeline (plugins, limits, context). */
export function attachWebSocket(server: Server, yoga: YogaServerInstance<YogaServerContext, ServiceContext>) {
  const wss = new WebSocketServer({ server, path: '/graphql' });
  type RootValue = { execute: (args: ExecutionArgs) => unknown; subscribe: (args: ExecutionArgs) => unknown };
  const disposable = useServer(
    {
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
