import {
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';

/**
 * Whether the selection beneath the field `info` resolves asks for nothing the Prisma plugin plans: no field
 * whose definition carries a Prisma selection (`pothosPrismaSelect`: the plugin's own mark for the relations and
 * `select` fields it wraps), at any depth, through fragments too. Such fields find their data through the mapping
 * their parent's resolver records; fields without it read their parent row as it is. Directives are not
 * evaluated: a planned field under `@skip` still counts, which only ever sends the field the plugin's way.
 *
 * The answer depends on the document alone, so it is kept per field node (the parsed document is cached and
 * reused between requests; a WeakMap lets it go with the document).
 */
const answers = new WeakMap<FieldNode, boolean>();

export function plansNothingBeneath(info: GraphQLResolveInfo): boolean {
  const type = getNamedType(info.returnType);
  const [first, ...others] = info.fieldNodes;
  if (!first) return false;
  let answer = answers.get(first);
  if (answer === undefined) {
    answer = plainSelection(first.selectionSet, type, info.schema, info.fragments, new Set());
    answers.set(first, answer);
  }
  return answer && others.every((node) => plainSelection(node.selectionSet, type, info.schema, info.fragments, new Set()));
}

function plainSelection(
  selectionSet: SelectionSetNode | undefined,
  type: GraphQLNamedType | undefined,
  schema: GraphQLSchema,
  fragments: Record<string, FragmentDefinitionNode>,
  spreading: Set<string>,
): boolean {
  if (!selectionSet) return true;
  if (!type) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith('__')) continue;
      if (!isObjectType(type) && !isInterfaceType(type)) return false;
      const field = type.getFields()[selection.name.value];
      if (!field || field.extensions?.pothosPrismaSelect) return false;
      if (!plainSelection(selection.selectionSet, getNamedType(field.type), schema, fragments, spreading)) return false;
    } else {
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments[selection.name.value] : selection;
      if (!fragment) return false;
      const name = selection.kind === Kind.FRAGMENT_SPREAD ? selection.name.value : undefined;
      if (name && spreading.has(name)) continue;
      if (name) spreading.add(name);
      const inner = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
      const plain = plainSelection(fragment.selectionSet, inner, schema, fragments, spreading);
      if (name) spreading.delete(name);
      if (!plain) return false;
    }
  }
  return true;
}
