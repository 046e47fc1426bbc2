import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import * as tools from './service.js';
import * as keys from './keys.js';
import { TOOL_CATEGORIES } from './schemas.js';

const ToolCategory = builder.enumType('ToolCategory', { values: TOOL_CATEGORIES });

export const ToolRef = builder.objectRef<tools.ToolResponse>('Tool').implement({
  description: 'A security tool: a built-in scan step (instance-wide) or one the workspace registered, as one workspace sees it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The UUID the REST API uses.' }),
    name: t.exposeString('name', { description: 'The `source` of the findings it submits.' }),
    category: t.expose('category', { type: ToolCategory }),
    description: t.exposeString('description'),
    version: t.exposeString('version'),
    builtin: t.exposeBoolean('builtin'),
    enabled: t.exposeBoolean('enabled', { description: 'In this workspace: disabled tools do not run and their keys cannot submit.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const ToolApiKeyRef = builder.objectRef<{ apiKey: string; key: keys.ToolKeyMetadata }>('ToolApiKey').implement({
  description: 'A new tool key. The secret is shown this once; only its hash is kept.',
  fields: (t) => ({
    apiKey: t.exposeString('apiKey', { description: 'Send it in the X-Tool-Api-Key header of POST /api/v1/api/tools/results.' }),
    prefix: t.string({ resolve: (payload) => payload.key.prefix }),
    createdAt: t.field({ type: 'DateTime', resolve: (payload) => payload.key.createdAt }),
  }),
});

// The module that owns tools adds them to workspaces.
builder.prismaObjectField('Workspace', 'tools', (t) =>
  t.loadableList({
    type: ToolRef,
    description: "The built-in tools and the workspace's own, with whether each is enabled here.",
    load: (ids: string[], ctx) => tools.toolsOfWorkspaces(ctx, ids),
    resolve: (workspace) => workspace.id,
  }),
);

const RegisterToolInput = builder.inputType('RegisterToolInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    category: t.field({ type: ToolCategory, required: true }),
    description: t.string(),
    version: t.string(),
  }),
});

const UpdateToolInput = builder.inputType('UpdateToolInput', {
  description: 'Custom tools only; absent fields stay as they are.',
  fields: (t) => ({
    name: t.string(),
    category: t.field({ type: ToolCategory }),
    description: t.string(),
    version: t.string(),
  }),
});

/** GraphQL's "absent" may arrive as null; services take undefined for absent. */
function withoutNulls<T extends Record<string, unknown>>(input: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined)) as never;
}

builder.mutationFields((t) => ({
  registerTool: t.field({
    type: ToolRef,
    errors: {},
    description: 'Registers a custom tool in the workspace (owners). Make its key with rotateToolApiKey.',
    args: { workspaceId: t.arg.id({ required: true }), input: t.arg({ type: RegisterToolInput, required: true }) },
    resolve: (_root, { workspaceId, input }, ctx) => tools.registerTool(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), withoutNulls(input)),
  }),
  updateTool: t.field({
    type: ToolRef,
    errors: {},
    description: "Changes a custom tool's fields (owners).",
    args: {
      workspaceId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateToolInput, required: true }),
    },
    resolve: (_root, { workspaceId, id, input }, ctx) =>
      tools.updateTool(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id'), withoutNulls(input)),
  }),
  setToolEnabled: t.field({
    type: ToolRef,
    errors: {},
    description: 'Enables or disables a tool (built-in or custom) for the workspace (owners).',
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), enabled: t.arg.boolean({ required: true }) },
    resolve: (_root, { workspaceId, id, enabled }, ctx) =>
      tools.setToolEnabled(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id'), { enabled }),
  }),
  rotateToolApiKey: t.field({
    type: ToolApiKeyRef,
    errors: {},
    description:
      "Makes a new key for the tool in the workspace (owners; workspaceId required) and revokes that workspace's previous one at once. The key submits to this workspace only; a built-in tool has one key per workspace.",
    args: { id: t.arg.id({ required: true }), workspaceId: t.arg.id() },
    resolve: (_root, { id, workspaceId }, ctx) => keys.rotateToolApiKey(ctx, decodeId(id, null, 'id'), decodeId(workspaceId, WorkspaceRef, 'workspaceId')),
  }),
  deleteTool: t.field({
    type: 'ID',
    errors: {},
    description: 'Deletes a custom tool and its key (owners); returns its id.',
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_root, { workspaceId, id }, ctx) =>
      (await tools.deleteTool(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id'))).id,
  }),
}));
