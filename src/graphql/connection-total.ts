import type { builder } from './builder.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * The options of a connection whose resolver returns its `totalCount` beside the page, read by the same
 * statement (the asset and finding connections, whose services choose counters or a count): the connection
 * type's name and its non-null `totalCount` field.
 */
export function connectionWithTotal<Shape extends object>(name: string, description: string) {
  return {
    name,
    fields: (t: PothosSchemaTypes.ObjectFieldBuilder<Types, Shape>) => ({
      totalCount: t.int({ description, resolve: (connection) => (connection as unknown as { totalCount: number }).totalCount }),
    }),
  };
}
