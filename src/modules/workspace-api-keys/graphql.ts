import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import * as keys from './service.js';

export const WorkspaceApiKeyRef = builder.objectRef<keys.WorkspaceApiKeyMetadata>('WorkspaceApiKey').implement({
  description: "A workspace API key's metadata (never the secret). The key authenticates our MCP endpoint, acting for its workspace at member level.",
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the key (pwk_…), to recognise it.' }),
    createdById: t.exposeString('createdById', {
      nullable: true,
      description: 'The owner who made it; the key reads as this member while they belong to the workspace.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});

const WorkspaceApiKeySecretRef = builder.objectRef<keys.WorkspaceApiKeySecret>('WorkspaceApiKeySecret').implement({
  description: 'A new workspace API key. The secret is shown this once; only its hash is kept.',
  fields: (t) => ({
    apiKey: t.exposeString('apiKey', { description: 'Send it in the x-service-api-key header of /api/v1/api/mcp.' }),
    key: t.field({ type: WorkspaceApiKeyRef, resolve: (payload) => payload.key }),
  }),
});

// The module that owns the keys adds them to workspaces.
builder.prismaObjectField('Workspace', 'apiKeys', (t) =>
  t.loadableList({
    type: WorkspaceApiKeyRef,
    nullable: true,
    description: "The workspace's valid API keys, newest first; null unless the caller is an owner.",
    load: (ids: string[], ctx) => keys.apiKeysOfWorkspaces(ctx, ids),
    resolve: (workspace) => workspace.id,
  }),
);

builder.mutationFields((t) => ({
  createWorkspaceApiKey: t.field({
    type: WorkspaceApiKeySecretRef,
    errors: {},
    description: 'Makes a named API key for the workspace (owners); the secret is returned this once.',
    args: { workspaceId: t.arg.id({ required: true }), name: t.arg.string({ required: true }) },
    resolve: (_root, { workspaceId, name }, ctx) => keys.createWorkspaceApiKey(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), { name }),
  }),
  revokeWorkspaceApiKey: t.field({
    type: WorkspaceApiKeyRef,
    errors: {},
    description: 'Revokes an API key of the workspace (owners): it stops working at once.',
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, { workspaceId, id }, ctx) => keys.revokeWorkspaceApiKey(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id')),
  }),
  rotateWorkspaceApiKey: t.field({
    type: WorkspaceApiKeySecretRef,
    errors: {},
    description:
      "Replaces the workspace's current API key (the newest valid one) with a new one of the same name (owners); the previous key stops working at once and the secret is returned this once.",
    args: { workspaceId: t.arg.id({ required: true }) },
    resolve: (_root, { workspaceId }, ctx) => keys.rotateWorkspaceApiKey(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId')),
  }),
}));
