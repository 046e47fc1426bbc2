import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { TestApp } from './app.js';

export interface WsError {
  message: string;
  extensions?: Record<string, unknown>;
}

/** What one operation over the socket produced so far: results, an error, completion. */
export interface Operation<T = any> {
  results: { data?: T; errors?: WsError[] }[];
  /** GraphQL errors of an `error` message, or the close event / error when the socket failed. */
  error?: unknown;
  completed: boolean;
  /** Every GraphQL error seen, from `error` messages and from results. */
  errors(): WsError[];
  dispose(): void;
}

export interface WsClient {
  client: Client;
  closes: { code: number; reason: string }[];
  subscribe<T = any>(query: string, variables?: Record<string, unknown>): Operation<T>;
  dispose(): Promise<void>;
}

/** A real graphql-ws client on ws://127.0.0.1:<port>/graphql; `token` goes in connection_init. */
export function wsClientFor(server: TestApp, token?: string, options: { lazy?: boolean } = {}): WsClient {
  const closes: { code: number; reason: string }[] = [];
  const client = createClient({
    url: `${server.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : undefined,
    lazy: options.lazy ?? true,
    retryAttempts: 0,
    // A non-lazy client logs socket failures to the console by default; they are recorded in `closes`.
    onNonLazyError: () => undefined,
    on: {
      closed: (event) => {
        const close = event as { code: number; reason: string | Buffer };
        closes.push({ code: close.code, reason: String(close.reason) });
      },
    },
  });
  return {
    client,
    closes,
    subscribe<T>(query: string, variables?: Record<string, unknown>) {
      const operation: Operation<T> = {
        results: [],
        completed: false,
        errors() {
          const fromError = Array.isArray(operation.error) ? (operation.error as WsError[]) : [];
          return [...fromError, ...operation.results.flatMap((result) => result.errors ?? [])];
        },
        dispose: () => undefined,
      };
      operation.dispose = client.subscribe<T>(
        { query, variables },
        {
          next: (value) => void operation.results.push(value as { data?: T; errors?: WsError[] }),
          error: (error) => {
            operation.error = error;
          },
          complete: () => {
            operation.completed = true;
          },
        },
      );
      return operation;
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}
