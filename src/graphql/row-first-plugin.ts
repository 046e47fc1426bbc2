import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type PothosOutputFieldType, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import { plansNothingBeneath } from './planned-beneath.js';

/**
 * Fields that answer from the row when the row already carries their value, before the Prisma plugin looks the
 * row's selection up.
 *
 * A Prisma field with a `select` (a relation, a relation count, a counter row, a column a computed field needs) is
 * planned into the statement that loads its parent, and the plugin wraps its resolver to find, for every row,
 * whether the row was loaded by that plan (`getLoaderMapping`: the row's response path as text, then a walk up the
 * path). On a 20-row page with two such fields that lookup was a sixth of the GraphQL request's CPU (targets page,
 * `npm run bench:api`). But the row answers the same question: a target loaded with its asset count has
 * `_count.assetLinks`. So a field with `extensions: rowFirst(read)` returns `read(row)` when that is not
 * `undefined`, and only otherwise goes through the plugin (which loads what the row lacks). Planning is unchanged:
 * the plugin still adds the field's `select` to the parent's query, so the statement reads what was asked.
 *
 * A relation's resolver also hands its mapping to the fields beneath it. So where the field's type is a Prisma
 * object, the row answers only when the field's selection asks for nothing beneath that the plugin plans
 * (another relation, a `select` field): decided once per field of a parsed document (planned-beneath.ts).
 */
export type ReadFromRow = (row: never) => unknown;

/** The plugin's name, for the builder's `plugins`. */
export const ROW_FIRST = 'perimeterRowFirst' as const;

/** The field's extensions: answer `read(row)` unless it is `undefined`. */
export function rowFirst<Row>(read: (row: Row) => unknown): { [ROW_FIRST]: ReadFromRow } {
  return { [ROW_FIRST]: read as ReadFromRow };
}

export class RowFirstPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const read = fieldConfig.extensions?.[ROW_FIRST] as ((row: unknown) => unknown) | undefined;
    if (!read) return resolver;
    if (this.isPrismaObject(fieldConfig.type)) {
      return (row, args, context, info) => {
        const value = plansNothingBeneath(info) ? read(row) : undefined;
        return value === undefined ? resolver(row, args, context, info) : value;
      };
    }
    return (row, args, context, info) => {
      const value = read(row);
      return value === undefined ? resolver(row, args, context, info) : value;
    };
  }

  private isPrismaObject(type: PothosOutputFieldType<Types>): boolean {
    if (type.kind === 'List') return this.isPrismaObject(type.type);
    if (type.kind !== 'Object' && type.kind !== 'Interface') return false;
    return Boolean(this.buildCache.getTypeConfig(type.ref).extensions?.pothosPrismaModel);
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      perimeterRowFirst: RowFirstPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(ROW_FIRST, RowFirstPlugin);
