import { PothosValidationError } from '@pothos/core';
import { resolveNodes } from '@pothos/plugin-relay';
import { isAbstractType, type GraphQLResolveInfo } from 'graphql';
import { builder, type GraphQLContext } from './builder.js';
import { parseId } from './ids.js';

/**
 * Relay's node(id:) and nodes(ids:), taking either id form: a global id looks in its type, a bare UUID (what
 * REST returns as `id`) in every node type. An object that is absent or not visible is null, never an error;
 * an id that is neither form, or the global id of a type that is not a Node, is BAD_USER_INPUT.
 */
const NodeInterface = builder.nodeInterfaceRef();

/** The types implementing Node, read from the schema so a new node type needs no list kept here. */
function nodeTypeNames(info: GraphQLResolveInfo): string[] {
  const node = info.schema.getType('Node');
  return isAbstractType(node) ? info.schema.getPossibleTypes(node).map((type) => type.name) : [];
}

async function resolveNode(value: string | number, ctx: GraphQLContext, info: GraphQLResolveInfo): Promise<unknown> {
  const parsed = parseId(String(value));
  const types = nodeTypeNames(info);
  if (!parsed || (parsed.typename !== null && !types.includes(parsed.typename))) {
    throw new PothosValidationError('Invalid id: neither the global id of a Node (its `id`) nor a UUID (its `databaseId`)');
  }
  // A UUID names no type: ask each (a primary-key read apiece, through each type's visibility rule); UUIDs do not collide.
  const candidates = parsed.typename ? [parsed.typename] : types;
  const found = await resolveNodes(
    builder,
    ctx,
    info,
    candidates.map((typename) => ({ typename, id: parsed.id })),
  );
  return found.find((node) => node != null) ?? null;
}

builder.queryFields((t) => ({
  node: t.field({
    type: NodeInterface,
    nullable: true,
    description: 'The object with this id (its global `id`, or its UUID `databaseId`); null when there is none you can see.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx, info) => resolveNode(args.id, ctx, info) as never,
  }),
  nodes: t.field({
    type: [NodeInterface],
    nullable: { list: false, items: true },
    description: 'node(id:) for each id, in order.',
    args: { ids: t.arg.idList({ required: true }) },
    resolve: (_root, args, ctx, info) => Promise.all(args.ids.map((id) => resolveNode(id, ctx, info))) as never,
  }),
}));
