import { writeFileSync, mkdirSync } from 'node:fs';
import { buildOpenApiDocument } from '../src/rest/openapi.js';

/** Writes schema/openapi.json for the default local address (the live one at /api/v1/openapi.json names PUBLIC_URL). */
mkdirSync('schema', { recursive: true });
writeFileSync('schema/openapi.json', `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log('wrote schema/openapi.json');
