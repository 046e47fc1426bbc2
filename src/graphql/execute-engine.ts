import { execute } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Queries and mutations run on graphql-js's own executor instead of yoga's default (@graphql-tools/executor).
 * Ours has no @defer/@stream to serve, and the default wraps every field of every row in promise helpers
 * (handleMaybePromise, fakePromise objects) even when all of them resolve synchronously: measured with
 * `npm run bench:api`, that wrapping and its garbage were the largest cost of a GraphQL list after the database.
 * Subscriptions keep yoga's executor (graphql-ws, the event streams).
 */
export function useGraphQLJsExecute(): Plugin {
  return {
    onExecute({ setExecuteFn }) {
      setExecuteFn(execute);
    },
  };
}
