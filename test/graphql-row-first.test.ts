import { Kind, parse, type FieldNode, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/graphql/schema.js';

/**
 * Fields marked rowFirst answer from a row that carries their value without the Prisma plugin's per-row
 * selection lookup (graphql/row-first-plugin.ts). The lookup needs the request's context and the field's resolve
 * info; given neither, a resolver that reaches it throws, so answering here proves the row was read first.
 */
const field = (type: string, name: string) => (schema.getType(type) as GraphQLObjectType).getFields()[name]!;
const resolveWithoutLookup = (type: string, name: string, row: object) => field(type, name).resolve!(row, {}, {}, {} as GraphQLResolveInfo);

describe('rowFirst fields (graphql/row-first-plugin.ts)', () => {
  it('answer from the row when it carries the value', () => {
    expect(resolveWithoutLookup('Target', 'assetCount', { _count: { assetLinks: 7 } })).toBe(7);
    expect(resolveWithoutLookup('Target', 'assetCount', { _count: { assetLinks: 0 } })).toBe(0);
    expect(resolveWithoutLookup('Target', 'findingCount', { openFindingCount: { open: 3 } })).toBe(3);
    // Loaded, a target without a counter row has none open.
    expect(resolveWithoutLookup('Target', 'findingCount', { openFindingCount: null })).toBe(0);
    expect(resolveWithoutLookup('Asset', 'dismissed', { dismissedAt: null })).toBe(false);
    expect(resolveWithoutLookup('Asset', 'dismissed', { dismissedAt: new Date() })).toBe(true);
    const toolCalls = [{ toolCallId: 'a' }];
    expect(resolveWithoutLookup('Message', 'toolCalls', { toolCalls })).toBe(toolCalls);
  });

  it('go through the Prisma plugin when the row lacks it (it loads what the row was not loaded with)', () => {
    for (const [type, name] of [
      ['Target', 'assetCount'],
      ['Target', 'findingCount'],
      ['Asset', 'dismissed'],
      ['Message', 'toolCalls'],
    ] as const) {
      expect(() => resolveWithoutLookup(type, name, { id: 'x' }), `${type}.${name}`).toThrow();
    }
  });

  it('answer a relation from the row only when nothing beneath it is planned by the Prisma plugin', () => {
    const discoveries = [{ source: 'dns', from: null, fromAssetId: null, scanId: null }];
    const discoveryOf = (document: string) => {
      const info = infoOf(document, 'discovery', 'Asset');
      return () => field('Asset', 'discovery').resolve!({ discoveries }, {}, {}, info);
    };
    expect(discoveryOf('{ a { discovery { source from scanId __typename } } }')()).toBe(discoveries);
    expect(discoveryOf('{ a { discovery { ...D } } } fragment D on AssetDiscovery { source ... on AssetDiscovery { from } }')()).toBe(discoveries);
    // fromAsset is a relation: it finds its rows through the mapping the plugin records for discovery.
    expect(discoveryOf('{ a { discovery { source fromAsset { value } } } }')).toThrow();
    expect(discoveryOf('{ a { discovery { ...D } } } fragment D on AssetDiscovery { fromAsset { value } }')).toThrow();
    expect(discoveryOf('{ a { discovery { ... on AssetDiscovery { fromAsset @skip(if: true) { value } } } } }')).toThrow();
  });
});

/** A resolve info for `fieldName` as the document selects it under its first field, without a path (no lookup can run). */
function infoOf(document: string, fieldName: string, parentType: string): GraphQLResolveInfo {
  const parsed = parse(document);
  const operation = parsed.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION)!;
  const outer = operation.selectionSet.selections[0] as FieldNode;
  const node = outer.selectionSet!.selections.find((selection) => selection.kind === Kind.FIELD && selection.name.value === fieldName) as FieldNode;
  const fragments = Object.fromEntries(
    parsed.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION).map((fragment) => [fragment.name.value, fragment]),
  );
  return { fieldNodes: [node], returnType: field(parentType, fieldName).type, schema, fragments } as unknown as GraphQLResolveInfo;
}
