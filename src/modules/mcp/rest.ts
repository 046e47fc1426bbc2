import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import * as mcp from './service.js';
import { MASK } from './headers.js';
import { MCP_TRANSPORTS, mcpServerName, putMcpServerInput, SSE_READ_TIMEOUT_SECONDS, TIMEOUT_SECONDS, toggleMcpServerInput } from './schemas.js';

const serverSchema = z
  .object({
    name: z.string(),
    url: z.string(),
    transport: z.enum(MCP_TRANSPORTS),
    headers: z.record(z.string(), z.string()).meta({
      description: `Headers sent to the server. Values are stored encrypted; those whose name looks secret (authorization, cookie, *api-key*, *token*, *secret*, …) read as "${MASK}". Send "${MASK}" back to keep a stored value.`,
    }),
    disabled: z.boolean(),
    allowed_tools: z.array(z.string()).meta({ description: 'Tool names that are allowed; empty allows every tool.' }),
    timeout: z
      .number()
      .int()
      .meta({ description: `Seconds a request may take (${TIMEOUT_SECONDS.min}–${TIMEOUT_SECONDS.max}).` }),
    sse_read_timeout: z
      .number()
      .int()
      .meta({ description: `Seconds an SSE stream may stay silent (${SSE_READ_TIMEOUT_SECONDS.min}–${SSE_READ_TIMEOUT_SECONDS.max}).` }),
  })
  .meta({ id: 'McpServerConfig' });

const pingSchema = z
  .object({
    ok: z.boolean(),
    latencyMs: z.number().int(),
    server: z.object({ name: z.string(), version: z.string() }).nullable().optional().meta({ description: 'What the server says it is (ok only).' }),
    tools: z
      .array(z.object({ name: z.string(), description: z.string().nullable(), allowed: z.boolean() }))
      .optional()
      .meta({ description: 'The tools the server offers (ok only); `allowed` applies allowed_tools.' }),
    error: z.string().optional().meta({ description: 'Why the check failed (not ok only).' }),
  })
  .meta({ id: 'McpServerPing' });

const tags = ['MCP'];
const nameParam = z.object({ name: mcpServerName }).strict();

export const mcpConfigsRest = router({
  list: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/agents/mcp-configs', tags, summary: "The workspace's MCP server configurations (members read)", requestHeaders },
    })
    .input(z.object({}).strict().optional())
    .output(z.object({ servers: z.array(serverSchema) }))
    .query(async ({ ctx }) => ({ servers: await mcp.listMcpServers(ctx.svc, ctx.workspaceId) })),

  put: workspaceProcedure
    .meta({
      errors: { 409: 'Another server of the workspace has this name, or the workspace has as many servers as allowed' },
      openapi: {
        method: 'PUT',
        path: '/api/agents/mcp-configs/{name}',
        tags,
        summary: 'Create or replace an MCP server configuration (owners)',
        description:
          "Absent fields take their defaults. The URL must be http(s) and its host must resolve outside blocked ranges (the scans' SCAN_ALLOWED_NETWORKS policy). A `name` in the body is ignored: the path names the configuration.",
        requestHeaders,
      },
    })
    .input(putMcpServerInput.extend({ name: mcpServerName }))
    .output(serverSchema)
    .mutation(({ ctx, input: { name, ...body } }) => mcp.putMcpServer(ctx.svc, ctx.workspaceId, name, body)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/agents/mcp-configs/{name}', tags, summary: 'Delete an MCP server configuration (owners)', requestHeaders },
    })
    .input(nameParam)
    .output(z.object({ name: z.string() }))
    .mutation(({ ctx, input }) => mcp.deleteMcpServer(ctx.svc, ctx.workspaceId, input.name)),

  toggle: workspaceProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/agents/mcp-configs/{name}/toggle',
        tags,
        summary: 'Enable or disable an MCP server configuration (owners)',
        requestHeaders,
      },
    })
    .input(toggleMcpServerInput.extend({ name: mcpServerName }))
    .output(serverSchema)
    .mutation(({ ctx, input: { name, ...body } }) => mcp.setMcpServerDisabled(ctx.svc, ctx.workspaceId, name, body)),

  ping: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/agents/mcp-configs/{name}/ping',
        tags,
        summary: 'Connect to the configured MCP server and list its tools (members)',
        description: 'Always 200 for an existing configuration: a failed check is `{ok: false, error}`. Bounded by the configured timeout, at most 30 s.',
        requestHeaders,
      },
    })
    .input(nameParam)
    .output(pingSchema)
    .query(({ ctx, input }) => mcp.pingMcpServer(ctx.svc, ctx.workspaceId, input.name)),
});
