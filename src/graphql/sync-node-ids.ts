import { isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { nodeIdOf, type NodeTypeName } from './ids.js';

const done = new WeakSet<GraphQLSchema>();

/**
 * The relay plugin resolves every `id` of a Node type with an `async` function, so each row of a page answered
 * a promise: graphql-js then completed every object of the page through promiseForObject (a promise per
 * field, a microtask per row), which was the largest single cost of a GraphQL list after the database
 * (npm run bench:api). Our Node types are all prisma nodes keyed by their `id` column (`id: { field: 'id' }`),
 * which Pothos always selects: the global id is computed here synchronously by ids.ts's nodeIdOf (the plugin's
 * own encoding, no custom encoder is configured), as REST's nodeId is. A parent without a string `id` still goes
 * through the plugin's own resolver.
 */
export function syncNodeIds(schema: GraphQLSchema): GraphQLSchema {
  if (done.has(schema)) return schema;
  done.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !type.getInterfaces().some((iface) => iface.name === 'Node')) continue;
    const field = type.getFields().id;
    const original = field?.resolve;
    if (!field || !original) continue;
    const typename = type.name as NodeTypeName;
    const resolve: GraphQLFieldResolver<unknown, unknown> = (parent, args, context, info) => {
      const id = (parent as { id?: unknown } | null)?.id;
      return typeof id === 'string' ? nodeIdOf(typename, id) : original(parent, args, context, info);
    };
    field.resolve = resolve;
  }
  return schema;
}
