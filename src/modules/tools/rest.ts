import { z } from 'zod';
import { procedure, router } from '../../rest/trpc.js';
import { inspectRequest, requestHeaders, signedInProcedure, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as tools from './service.js';
import * as keys from './keys.js';
import { submitToolResults } from './results.js';
import { listToolsInput, registerToolInput, submitResultsInput, TOOL_CATEGORIES, updateToolInput } from './schemas.js';

const toolSchema = z
  .object({
    id: z.string(),
    name: z.string().meta({ description: "Unique among the built-in tools and the workspace's own; the `source` of the findings it submits." }),
    category: z.enum(TOOL_CATEGORIES),
    description: z.string(),
    version: z.string(),
    builtin: z.boolean().meta({ description: 'A scan step of this release (instance-wide), or a tool the workspace registered.' }),
    enabled: z.boolean().meta({ description: 'In this workspace: disabled tools do not run and their keys cannot submit.' }),
    workspaceId: z.string().nullable().meta({ description: 'Null for built-in tools.' }),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'Tool' });

const keyMetadataSchema = z
  .object({
    id: z.string(),
    toolId: z.string(),
    workspaceId: z.string().nullable().meta({ description: 'The workspace the key was made in: the only one it submits to.' }),
    prefix: z.string().meta({ description: 'The first characters of the key (ptk_…), to recognise it; never the secret.' }),
    createdAt: dateTime,
    lastUsedAt: dateTime.nullable(),
    createdById: z.string().nullable(),
  })
  .meta({ id: 'ToolApiKeyMetadata' });

const rotatedKeySchema = z
  .object({
    apiKey: z.string().meta({ description: 'The new key (ptk_…), shown this once. Send it in the X-Tool-Api-Key header.' }),
    prefix: z.string(),
    createdAt: dateTime,
  })
  .meta({ id: 'ToolApiKey' });

const reportSchema = z
  .object({
    toolId: z.string(),
    workspaceId: z.string(),
    accepted: z.number().int().meta({ description: 'Lines or items that became a finding or an asset.' }),
    rejected: z.number().int().meta({ description: 'Lines or items refused; each has one entry in errors (the first 100 are listed).' }),
    skipped: z.number().int().meta({ description: 'nuclei lines that are not matches (matcher-status false).' }),
    errors: z.array(
      z.object({
        line: z.number().int().meta({ description: "nuclei-jsonl: the line number; json: the item's position in its list (both from 1)." }),
        path: z.string().optional().meta({ description: 'json: the item and field, e.g. findings[2].severity.' }),
        message: z.string(),
      }),
    ),
    assets: z.object({ created: z.number().int(), seen: z.number().int() }),
    findings: z.object({
      opened: z.number().int().meta({ description: 'New findings.' }),
      seen: z.number().int().meta({ description: 'Known open (or dismissed) findings seen again: one more occurrence.' }),
      reopened: z.number().int().meta({ description: 'Fixed findings seen again.' }),
    }),
  })
  .meta({ id: 'ToolResultsReport' });

const tags = ['Tools'];
const keyHeaders = z.object({
  'x-workspace-id': z.string().optional().meta({ description: 'The workspace whose key this is (a built-in tool has one key per workspace).' }),
});
const submitHeaders = z.object({
  'x-tool-api-key': z.string().optional().meta({ description: "The tool's API key (ptk_…). `Authorization: Bearer ptk_…` is accepted too." }),
  'x-workspace-id': z
    .string()
    .optional()
    .meta({ description: 'Optional: the workspace the key was made in (another one is refused with 403). Results always land there.' }),
});

/** A tool's key instead of a user: checked before the input, so a call without a valid key gets 401. */
const toolAuthenticated = procedure
  .meta({ access: 'toolKey' })
  .use(async ({ ctx, next }) => {
    const tool = await keys.authenticateToolKey(ctx.svc.deps, keys.toolKeyFromHeaders(ctx.headers));
    // The audit log names the key (rest/audit-edge.ts reads it from the service context).
    ctx.svc.toolKey = { id: tool.keyId, prefix: tool.prefix, workspaceId: tool.workspaceId };
    return next({ ctx: { tool } });
  })
  .use(inspectRequest);

function toRotated({ apiKey, key }: Awaited<ReturnType<typeof keys.rotateToolApiKey>>) {
  return { apiKey, prefix: key.prefix, createdAt: key.createdAt };
}

/** Static paths first: the first procedure whose path matches serves the request. */
export const toolsRest = router({
  list: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/tools',
        tags,
        summary: "List the built-in tools and the workspace's own, with whether each is enabled here",
        requestHeaders,
      },
    })
    .input(listToolsInput)
    .output(pageSchema(toolSchema))
    .query(({ ctx, input }) => tools.listTools(ctx.svc, ctx.workspaceId, input)),

  register: workspaceProcedure
    .meta({
      errors: { 409: 'A tool of the workspace or a built-in tool already has this name' },
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/tools', tags, summary: 'Register a custom tool in the workspace (owners)', requestHeaders },
    })
    .input(registerToolInput)
    .output(toolSchema)
    .mutation(({ ctx, input }) => tools.registerTool(ctx.svc, ctx.workspaceId, input)),

  submitResults: toolAuthenticated
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/tools/results',
        tags,
        summary: "Submit a tool's results (nuclei -jsonl output, or JSON findings and assets), authenticated by the tool's key",
        description:
          "Results land in the inventory and findings exactly as a native scan's do: a finding with the same check id, asset and matcher as an existing one counts one more occurrence of it. Lines (or items) are judged one by one; the report lists those refused.",
        requestHeaders: submitHeaders,
      },
    })
    .input(submitResultsInput)
    .output(reportSchema)
    .mutation(({ ctx, input }) => submitToolResults(ctx.svc, ctx.tool, input)),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/tools/{id}', tags, summary: 'Get one tool as the workspace sees it', requestHeaders } })
    .input(idParam)
    .output(toolSchema)
    .query(({ ctx, input }) => tools.getTool(ctx.svc, ctx.workspaceId, input.id)),

  update: workspaceProcedure
    .meta({
      errors: { 409: 'A tool of the workspace or a built-in tool already has this name' },
      openapi: {
        method: 'PATCH',
        path: '/api/tools/{id}',
        tags,
        summary: 'Change a custom tool, or enable/disable any tool for the workspace (owners; built-in tools take only enabled)',
        requestHeaders,
      },
    })
    .input(updateToolInput.extend({ id: uuidParam }))
    .output(toolSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => tools.updateTool(ctx.svc, ctx.workspaceId, id, patch)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/tools/{id}', tags, summary: 'Delete a custom tool and its key (owners)', requestHeaders } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => tools.deleteTool(ctx.svc, ctx.workspaceId, input.id)),

  getApiKey: signedInProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/tools/{id}/api-key',
        tags,
        summary: "The tool's current key in the workspace: prefix and dates, never the secret (workspace owners)",
        requestHeaders: keyHeaders,
      },
    })
    .input(idParam)
    .output(z.object({ key: keyMetadataSchema.nullable().meta({ description: 'Null when the tool has no key yet.' }) }))
    .query(async ({ ctx, input }) => ({ key: await keys.getToolApiKey(ctx.svc, input.id, ctx.svc.workspaceId) })),

  rotateApiKey: signedInProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/tools/{id}/api-key/rotate',
        tags,
        summary: "Make a new key for the tool in the workspace, shown once; the workspace's previous key stops working at once (workspace owners)",
        requestHeaders: keyHeaders,
      },
    })
    .input(idParam)
    .output(rotatedKeySchema)
    .mutation(async ({ ctx, input }) => toRotated(await keys.rotateToolApiKey(ctx.svc, input.id, ctx.svc.workspaceId))),
});
