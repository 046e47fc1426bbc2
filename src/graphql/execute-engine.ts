import { BREAK, execute, Kind, visit, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { runningCompiled } from './compiled-paths.js';
import { withGraphQLJsErrors } from './compiled-errors.js';

/**
 * Queries and mutations run compiled by graphql-jit once their document comes back, and on graphql-js's own
 * executor before that; subscriptions keep yoga's executor (graphql-ws, the event streams). Not yoga's default
 * executor: it wraps every field in promise helpers even when all of them resolve synchronously.
 *
 * Why compiled: graphql-js walks the selection for every field of every row (an info object, an arguments object
 * and a result object with a null prototype each time), which on a 20-row page cost more CPU than the page's
 * statement. graphql-jit turns a document into a function once, with the field reads inlined. Measured side by
 * side on the list pages (app CPU per GraphQL POST): targets 502 -> 372 µs, assets 706 -> 492, workspaces
 * 1093 -> 623.
 *
 * Why only from the second execution: compiling costs about a millisecond, twice what a page costs to execute,
 * and a document sent once (a one-off query, a client writing values into the text) never pays it back.
 * GRAPHQL_COMPILE_AFTER sets how many executions run on graphql-js first: 1 by default, 0 compiles at once (the
 * tests do, so every document they send runs compiled), `off` never compiles.
 *
 * The Prisma plugin finds a row's plan by the identity of the response path's links, which graphql-jit rebuilds
 * for every call: compiled-paths.ts hands its resolvers one link per position instead. Errors are handed on as
 * graphql-js raises them (compiled-errors.ts).
 */
interface CompiledEntry {
  executions: number;
  /** Set once compiled; null when graphql-jit could not (graphql-js answers, and says why). */
  compiled?: CompiledQuery | null;
}

type CompiledEntries = WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, CompiledEntry>>>;

/** The operation's entry; none for a name the document does not define (graphql-js refuses it; nothing is kept). */
function entryOf(entries: CompiledEntries, args: ExecutionArgs): CompiledEntry | undefined {
  const operation = args.operationName ?? '';
  if (operation && !args.document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.name?.value === operation)) {
    return undefined;
  }
  let bySchema = entries.get(args.schema);
  if (!bySchema) {
    bySchema = new WeakMap();
    entries.set(args.schema, bySchema);
  }
  let byOperation = bySchema.get(args.document);
  if (!byOperation) {
    byOperation = new Map();
    bySchema.set(args.document, byOperation);
  }
  let entry = byOperation.get(operation);
  if (!entry) {
    entry = { executions: 0 };
    byOperation.set(operation, entry);
  }
  return entry;
}

/** Runs the operation compiled once its document has run `compileAfter` times on graphql-js (never when `off`). */
export function createExecute(compileAfter: number | 'off'): (args: ExecutionArgs) => ReturnType<typeof execute> {
  if (compileAfter === 'off') return execute;
  // Weak both ways: a document yoga's parse cache lets go takes its compiled function with it.
  const entries: CompiledEntries = new WeakMap();
  return (args) => {
    const entry = entryOf(entries, args);
    if (!entry) return execute(args);
    if (entry.compiled === undefined && entry.executions++ >= compileAfter) {
      entry.compiled = compiledOrNull(args);
    }
    if (!entry.compiled) return execute(args);
    runningCompiled(args.contextValue);
    const result = entry.compiled.query(args.rootValue, args.contextValue, args.variableValues ?? {});
    return isPromise(result) ? result.then((settled) => settle(settled, args)) : settle(result, args);
  };
}

/**
 * graphql-jit answers errors for what it cannot compile; anything it throws is taken the same way. A document
 * with a `__proto__` response key stays on graphql-js, whose result objects have no prototype: graphql-jit's
 * object literals would take the key as the object's prototype and drop the field from the answer.
 */
function compiledOrNull(args: ExecutionArgs): CompiledQuery | null {
  if (hasPrototypeKey(args.document)) return null;
  try {
    const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined);
    return isCompiledQuery(compiled) ? compiled : null;
  } catch {
    return null;
  }
}

/**
 * A compiled result, its errors as graphql-js raises them. One without `data` was refused before anything ran
 * (its variables did not fit the operation): graphql-js refuses it again, so the client reads the same message and
 * code whichever executor it met.
 */
function settle(result: ExecutionResult, args: ExecutionArgs): ReturnType<typeof execute> {
  if (result.errors?.length && result.data === undefined) return execute(args);
  return withGraphQLJsErrors(result, args.document);
}

function hasPrototypeKey(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if ((node.alias ?? node.name).value === '__proto__') found = true;
      return found ? BREAK : undefined;
    },
  });
  return found;
}

const isPromise = <T>(value: T | Promise<T>): value is Promise<T> => typeof (value as { then?: unknown })?.then === 'function';

export function useCompiledExecute(compileAfter: number | 'off'): Plugin {
  const executeOperation = createExecute(compileAfter);
  return {
    onExecute({ setExecuteFn }) {
      setExecuteFn(executeOperation);
    },
  };
}
