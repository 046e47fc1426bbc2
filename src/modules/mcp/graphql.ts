import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { ValidationError } from '../../errors.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import * as mcp from './service.js';
import { MASK } from './headers.js';
import type { PutMcpServerInput } from './schemas.js';

/** The service speaks the seed's snake_case; GraphQL clients sent camelCase, so their errors name those fields. */
const GRAPHQL_FIELD: Record<string, string> = { allowed_tools: 'allowedTools', sse_read_timeout: 'sseReadTimeout' };
function inGraphQLTerms(error: unknown): never {
  if (!(error instanceof ValidationError) || !error.details) throw error;
  const rename = (field: string) => field.replace(/^[a-z_]+/, (head) => GRAPHQL_FIELD[head] ?? head);
  const details = error.details.map((issue) => ({ ...issue, field: rename(issue.field) }));
  throw new ValidationError(`Invalid input: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
}

export const McpServerConfigRef = builder.objectRef<mcp.McpServerView>('McpServerConfig').implement({
  description: "An MCP server the workspace's agents may use.",
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name', { description: 'Unique in the workspace (case-insensitive).' }),
    url: t.exposeString('url'),
    transport: t.exposeString('transport', { description: '`sse` or `streamable-http`.' }),
    headers: t.field({
      type: 'JSON',
      description: `Header names to values. Values are stored encrypted; secret-looking ones (authorization, cookie, *api-key*, *token*, *secret*, …) read as "${MASK}".`,
      resolve: (server) => server.headers,
    }),
    disabled: t.exposeBoolean('disabled'),
    allowedTools: t.exposeStringList('allowed_tools', { description: 'Tool names that are allowed; empty allows every tool.' }),
    timeout: t.exposeInt('timeout', { description: 'Seconds a request may take (1–300).' }),
    sseReadTimeout: t.exposeInt('sse_read_timeout', { description: 'Seconds an SSE stream may stay silent (1–3600).' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

// The module that owns the configurations adds them to workspaces.
builder.prismaObjectField('Workspace', 'mcpServers', (t) =>
  t.loadableList({
    type: McpServerConfigRef,
    description: "The workspace's MCP server configurations, by name.",
    load: (ids: string[], ctx) => mcp.mcpServersOfWorkspaces(ctx, ids),
    resolve: (workspace) => workspace.id,
  }),
);

const McpServerConfigInput = builder.inputType('McpServerConfigInput', {
  description: 'A whole configuration: absent fields take their defaults. Send a header value as "***" to keep the stored one.',
  fields: (t) => ({
    url: t.string({ required: true }),
    transport: t.string({ required: true, description: '`sse` or `streamable-http`.' }),
    headers: t.field({ type: 'JSON', description: 'An object of header names to string values.' }),
    disabled: t.boolean(),
    allowedTools: t.stringList(),
    timeout: t.int({ description: 'Seconds, 1–300 (default 30).' }),
    sseReadTimeout: t.int({ description: 'Seconds, 1–3600 (default 300).' }),
  }),
});

builder.mutationFields((t) => ({
  upsertMcpServerConfig: t.field({
    type: McpServerConfigRef,
    errors: {},
    description: 'Creates or replaces the MCP server configuration called `name` (owners).',
    args: {
      workspaceId: t.arg.id({ required: true }),
      name: t.arg.string({ required: true }),
      input: t.arg({ type: McpServerConfigInput, required: true }),
    },
    resolve: (_root, { workspaceId, name, input }, ctx) =>
      mcp
        .putMcpServer(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), name, {
          url: input.url,
          // The service validates both (an unknown transport or a non-object is a ValidationError).
          transport: input.transport as PutMcpServerInput['transport'],
          headers: (input.headers ?? undefined) as PutMcpServerInput['headers'],
          disabled: input.disabled ?? undefined,
          allowed_tools: input.allowedTools ?? undefined,
          timeout: input.timeout ?? undefined,
          sse_read_timeout: input.sseReadTimeout ?? undefined,
        })
        .catch(inGraphQLTerms),
  }),
  deleteMcpServerConfig: t.field({
    type: 'String',
    errors: {},
    description: 'Deletes an MCP server configuration (owners); returns its name.',
    args: { workspaceId: t.arg.id({ required: true }), name: t.arg.string({ required: true }) },
    resolve: async (_root, { workspaceId, name }, ctx) => (await mcp.deleteMcpServer(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), name)).name,
  }),
  toggleMcpServerConfig: t.field({
    type: McpServerConfigRef,
    errors: {},
    description: 'Enables or disables an MCP server configuration (owners).',
    args: {
      workspaceId: t.arg.id({ required: true }),
      name: t.arg.string({ required: true }),
      disabled: t.arg.boolean({ required: true }),
    },
    resolve: (_root, { workspaceId, name, disabled }, ctx) =>
      mcp.setMcpServerDisabled(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), name, { disabled }),
  }),
}));
