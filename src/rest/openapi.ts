import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import { restRouter } from './router.js';
import { errorSchema } from './schemas.js';

export const REST_PREFIX = '/api/v1';

/**
 * The OpenAPI 3 document of the REST facade. Error responses are rewritten to our one error shape
 * (the generator knows only tRPC's), and bearer auth is declared.
 */
export function buildOpenApiDocument(baseUrl = 'http://localhost:3000'): OpenAPIObject {
  const document = generateOpenApiDocument(restRouter, {
    title: 'Perimeter REST API',
    description:
      'Attack surface management. Authenticate with `Authorization: Bearer <token>` (a session token from sign-in, or a personal API token `prm_…`). Workspace-scoped routes read the workspace from the `X-Workspace-Id` header (or a `wid` cookie).',
    version: '1.0',
    baseUrl: `${baseUrl}${REST_PREFIX}`,
    securitySchemes: { Authorization: { type: 'http', scheme: 'bearer' } },
    defs: { Error: errorSchema },
  });
  const errorJsonSchema = { $ref: '#/components/schemas/Error' };
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, { responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (Number(status) >= 400 || status === 'default') {
          if (response.content?.['application/json']) response.content['application/json'].schema = errorJsonSchema;
        }
      }
    }
  }
  return document;
}

export { z };
