import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { nastyString, nastyValue, stringFor, type Random } from './random.js';

export interface GraphQLCase {
  operation: string;
  query: string;
  variables: Record<string, unknown>;
  as: 'owner' | 'anonymous';
}

export interface GraphQLFuzzIdentity {
  /** The run's workspace: as a raw UUID and as a global id. */
  workspaceIds: string[];
  knownIds: string[];
}

function leafFields(type: GraphQLNamedType): string {
  if (!isObjectType(type) && !isInterfaceType(type)) return '';
  const names = Object.values(type.getFields())
    .filter((field) => isLeafType(getNamedType(field.type)) && !field.args.some((arg) => isNonNullType(arg.type)))
    .map((field) => field.name)
    .slice(0, 12);
  return names.join(' ');
}

/** A selection two levels deep: leaves, then the leaves of object fields (unions through inline fragments). */
function selectionFor(type: GraphQLNamedType, depth = 0): string {
  if (isLeafType(type)) return '';
  if (isUnionType(type)) {
    const parts = type.getTypes().map((member) => `... on ${member.name} { ${selectionFor(member, depth + 1).slice(1, -1) || '__typename'} }`);
    return `{ __typename ${parts.join(' ')} }`;
  }
  if (!isObjectType(type) && !isInterfaceType(type)) return '{ __typename }';
  const parts = ['__typename', leafFields(type)];
  if (depth < 2) {
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (isLeafType(named) || field.args.some((arg) => isNonNullType(arg.type))) continue;
      parts.push(`${field.name} ${selectionFor(named, depth + 1)}`);
      if (parts.length > 8) break;
    }
  }
  return `{ ${parts.filter(Boolean).join(' ')} }`;
}

function inputValue(random: Random, type: GraphQLInputType, identity: GraphQLFuzzIdentity, protect: boolean, depth = 0): unknown {
  if (isNonNullType(type)) return random.chance(0.03) ? null : inputValue(random, type.ofType, identity, protect, depth);
  if (random.chance(0.05)) return nastyValue(random);
  if (isListType(type)) {
    const length = random.pick([0, 1, 2, 3, 150]);
    return Array.from({ length }, () => inputValue(random, type.ofType, identity, protect, depth + 1));
  }
  if (isEnumType(type)) return random.chance(0.9) ? random.pick(type.getValues()).name : 'NOT_A_VALUE';
  if (isInputObjectType(type)) {
    const result: Record<string, unknown> = {};
    if (depth > 5) return result;
    for (const field of Object.values(type.getFields())) {
      if (isNonNullType(field.type) || random.chance(0.6)) result[field.name] = inputValue(random, field.type, identity, protect, depth + 1);
    }
    return result;
  }
  switch (type.name) {
    case 'ID': {
      const ids = protect ? identity.knownIds.filter((id) => !identity.workspaceIds.includes(id)) : [...identity.knownIds, ...identity.workspaceIds];
      const choice = random.int(0, 9);
      if (choice < 5 && ids.length) return random.pick(ids);
      if (choice < 7) return random.uuid();
      return nastyString(random);
    }
    case 'Int':
      return random.chance(0.8) ? random.int(0, 50) : random.pick([-1, 2 ** 31 - 1, -(2 ** 31), 1_000_000]);
    case 'Float':
      return random.chance(0.8) ? random.next() * 100 : random.pick([-1, 1e308, 0.1]);
    case 'Boolean':
      return random.chance(0.5);
    case 'String':
      return random.chance(0.8) ? stringFor(random, undefined, undefined) : nastyString(random);
    case 'DateTime':
      return random.chance(0.8) ? new Date(1_700_000_000_000).toISOString() : nastyString(random);
    default:
      return random.chance(0.7) ? stringFor(random, undefined, undefined) : nastyValue(random);
  }
}

function operationText(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const variables = field.args.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const args = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  return `${kind} Fuzz${variables ? `(${variables})` : ''} { ${field.name}${args ? `(${args})` : ''} ${selectionFor(getNamedType(field.type))} }`;
}

/** `count` cases for every query and mutation field of the schema. */
export function graphqlCases(random: Random, schema: GraphQLSchema, identity: GraphQLFuzzIdentity, count: number): GraphQLCase[] {
  const cases: GraphQLCase[] = [];
  for (const [kind, root] of [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
  ] as const) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      const query = operationText(kind, field);
      // The run's own workspace is never deleted, archived or left: the other cases need it.
      const protect = kind === 'mutation' && /delete|archive|remove|leave|signOut|revoke/i.test(field.name);
      for (let i = 0; i < count; i++) {
        const variables: Record<string, unknown> = {};
        for (const arg of field.args) {
          if (isNonNullType(arg.type) || random.chance(0.6)) variables[arg.name] = inputValue(random, arg.type, identity, protect);
        }
        cases.push({ operation: `${kind} ${field.name}`, query, variables, as: random.chance(0.9) ? 'owner' : 'anonymous' });
      }
    }
  }
  return cases;
}
