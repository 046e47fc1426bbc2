import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import { ROW_FIRST as RowFirstPlugin } from './row-first-plugin.js';
import { STABLE_PATHS as StablePathsPlugin } from './compiled-paths.js';
import type PrismaTypes from '../../prisma/generated/pothos-types.js';
import { getDatamodel } from '../../prisma/generated/pothos-types.js';
import type { ServiceContext } from '../context.js';
import { AppError, ConflictError, ForbiddenError, NotFoundError, RateLimitedError, UnauthenticatedError, ValidationError } from '../errors.js';

export type GraphQLContext = ServiceContext;

/** THE schema builder: plugins, scalars, scopes and error defaults. Types live in modules/<domain>/graphql.ts. */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: { signedIn: boolean; admin: boolean };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  // RowFirst and StablePaths before Prisma: they wrap the Prisma plugin's resolvers (row-first-plugin.ts,
  // compiled-paths.ts).
  plugins: [ScopeAuthPlugin, ErrorsPlugin, RowFirstPlugin, StablePathsPlugin, PrismaPlugin, RelayPlugin, DataloaderPlugin],
  // Fields are non-null unless they say otherwise: clients get precise types.
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: async (ctx) => ({ signedIn: ctx.viewer !== null, admin: ctx.viewer?.role === 'admin' }),
    unauthorizedError: () => new UnauthenticatedError(),
  },
  prisma: {
    client: (ctx) => ctx.deps.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    // node(id:) and nodes(ids:) are defined in graphql/node.ts: they take a UUID as well as a global id.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
  // Every field with `errors: {}` (every mutation) returns these as typed union members; graphql/errors.ts
  // gives them their GraphQL types. The plugin tries subclasses before AppError, whatever the order here.
  errors: { defaultTypes: [ValidationError, UnauthenticatedError, ForbiddenError, NotFoundError, ConflictError, RateLimitedError, AppError] },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
