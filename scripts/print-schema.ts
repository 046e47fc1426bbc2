import { writeFileSync, mkdirSync } from 'node:fs';
import { printSchemaSDL } from '../src/graphql/schema.js';

/** Writes schema/schema.graphql from the Pothos schema (sorted, so diffs are stable). */
mkdirSync('schema', { recursive: true });
writeFileSync('schema/schema.graphql', printSchemaSDL());
console.log('wrote schema/schema.graphql');
