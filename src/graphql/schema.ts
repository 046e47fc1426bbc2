import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import { syncNodeIds } from './sync-node-ids.js';
import './scalars.js';
import './errors.js';
import './node.js';
import '../modules/accounts/graphql.js';
import '../modules/workspaces/graphql.js';
import '../modules/workspaces/discovery-settings-graphql.js';
import '../modules/workspaces/template-settings-graphql.js';
import '../modules/targets/graphql.js';
import '../modules/assets/graphql.js';
import '../modules/vulnerabilities/graphql.js';
import '../modules/scans/graphql.js';
import '../modules/system-configs/graphql.js';
import '../modules/tools/graphql.js';
import '../modules/templates/graphql.js';
import '../modules/agents/graphql.js';
import '../modules/workspace-api-keys/graphql.js';
import '../modules/mcp/graphql.js';
import '../modules/schedules/graphql.js';
import '../modules/webhooks/graphql.js';
import '../modules/audit/graphql.js';
import '../modules/changes/graphql.js';

/** Every module's graphql.ts registers its types and fields on the builder; this builds the schema once. */
export const schema = syncNodeIds(builder.toSchema());

export function printSchemaSDL(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
