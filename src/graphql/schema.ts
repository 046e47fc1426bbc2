import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './errors.js';
import '../modules/accounts/graphql.js';
import '../modules/workspaces/graphql.js';

/** Every module's graphql.ts registers its types and fields on the builder; this builds the schema once. */
export const schema = builder.toSchema();

export function printSchemaSDL(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
