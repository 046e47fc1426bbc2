import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';

/**
 * Stable response paths for resolvers that run compiled (execute-engine.ts).
 *
 * The Prisma plugin plans one query for a field and the relations beneath it, and records where each part of the
 * plan landed against the response path's links (a WeakMap keyed by `info.path`): a relation on a row finds its
 * data by walking up its own path to a link its parent's resolver recorded. graphql-js builds each link once and
 * shares it with everything beneath; graphql-jit builds a fresh chain for every resolver call, so no lookup
 * would ever match and every relation on every row would load its data again (one more statement per relation).
 *
 * So, in a request that runs compiled, the resolvers that plan or look plans up (plansOrLooksUpPlans) see one
 * link per position of the response, the same object for the same position, built on first use and kept for the
 * request. Other resolvers never read it and are left as they are.
 */
type PathKey = string | number;

interface Link {
  readonly key: PathKey;
  readonly prev: Link | undefined;
  readonly typename: string | undefined;
}

const compiledContexts = new WeakSet<object>();
const rootLinks = new WeakMap<object, Map<PathKey, Link>>();
const childLinks = new WeakMap<Link, Map<PathKey, Link>>();

/**
 * Called by the executor before a compiled operation runs with this context. Each execution starts from fresh
 * links, as graphql-js's own paths do, should a context ever serve more than one operation.
 */
export function runningCompiled(context: unknown): void {
  if (typeof context !== 'object' || context === null) return;
  compiledContexts.add(context);
  rootLinks.delete(context);
}

/** Whether a compiled operation ran with this context. */
export function ranCompiled(context: object): boolean {
  return compiledContexts.has(context);
}

/** The request's link for this position of the response, the same object every time it is asked. */
export function stableLink(context: object, path: GraphQLResolveInfo['path'] | undefined): Link | undefined {
  if (!path) return undefined;
  const prev = stableLink(context, path.prev);
  const owner = prev ?? context;
  const links = prev ? childLinks : rootLinks;
  let siblings = links.get(owner as Link);
  if (!siblings) {
    siblings = new Map();
    links.set(owner as Link, siblings);
  }
  let link = siblings.get(path.key);
  if (!link) {
    link = { key: path.key, prev, typename: path.typename };
    siblings.set(path.key, link);
  }
  return link;
}

/** The plugin's name, for the builder's `plugins`. */
export const STABLE_PATHS = 'perimeterStablePaths' as const;

export class StablePathsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (!plansOrLooksUpPlans(fieldConfig)) return resolver;
    return (parent, args, context, info) => {
      if (!compiledContexts.has(context)) return resolver(parent, args, context, info);
      // graphql-jit builds a fresh info object for every call: nothing else holds this one.
      (info as { path: unknown }).path = stableLink(context, info.path);
      return resolver(parent, args, context, info);
    };
  }
}

/**
 * The fields whose resolvers record or read the Prisma plugin's plans by path: those it wraps (a Prisma selection:
 * relations, relation counts, `select` fields, connections on a Prisma object), `t.prismaField` and
 * `t.prismaConnection` (which name their model as a string, where other fields pass a type ref), and root fields
 * resolving to objects (`node(id:)` loads through the plugin too). Other fields, a plain list of members for one,
 * keep their resolver as it is: a stable link costs a lookup per level of the path.
 */
function plansOrLooksUpPlans<Types extends SchemaTypes>(fieldConfig: PothosOutputFieldConfig<Types>): boolean {
  if (fieldConfig.extensions?.pothosPrismaSelect) return true;
  const type = fieldConfig.type.kind === 'List' ? fieldConfig.type.type : fieldConfig.type;
  if (type.kind === 'Scalar' || type.kind === 'Enum') return false;
  if (fieldConfig.kind === 'Query' || fieldConfig.kind === 'Mutation' || fieldConfig.kind === 'Subscription') return true;
  const named = (fieldConfig.pothosOptions as { type?: unknown }).type;
  return typeof named === 'string' || (Array.isArray(named) && typeof named[0] === 'string');
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      perimeterStablePaths: StablePathsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(STABLE_PATHS, StablePathsPlugin);
