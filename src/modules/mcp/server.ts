import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceContext } from '../../context.js';
import type { Logger } from '../../logger.js';
import { AppError } from '../../errors.js';
import * as targets from '../targets/service.js';
import * as assets from '../assets/service.js';
import * as vulnerabilities from '../vulnerabilities/service.js';
import * as scans from '../scans/service.js';
import { toScanResponse } from '../scans/response.js';
import { scanOptionsInput } from '../scans/schemas.js';
import { TARGET_SORT_FIELDS, TARGET_TYPES } from '../targets/schemas.js';
import { ASSET_KINDS, ASSET_SORT_FIELDS } from '../assets/schemas.js';
import { FINDING_SORT_FIELDS, FINDING_STATUS_FILTERS, SEVERITIES } from '../vulnerabilities/schemas.js';
import { SCAN_STATUSES } from '../scans/schemas.js';
import { entityIdsOf, recordRequestWrite } from '../audit/record.js';

/** Lists an agent reads are kept small: its context window is the budget. */
export const MCP_MAX_PAGE_SIZE = 50;
const MCP_DEFAULT_PAGE_SIZE = 20;

const id = (what: string) => z.string().uuid({ message: 'must be a UUID' }).describe(`The ${what}'s id (UUID).`);
const paging = {
  page: z.number().int().min(1).max(1_000_000).optional().describe('Page number, from 1 (default 1).'),
  limit: z.number().int().min(1).max(MCP_MAX_PAGE_SIZE).optional().describe(`Items per page, 1–${MCP_MAX_PAGE_SIZE} (default ${MCP_DEFAULT_PAGE_SIZE}).`),
  sortOrder: z.enum(['ASC', 'DESC']).optional().describe('Sort direction (default DESC).'),
};
const page = (args: { page?: number; limit?: number }) => ({ page: args.page ?? 1, limit: args.limit ?? MCP_DEFAULT_PAGE_SIZE });

type Run<A> = (ctx: ServiceContext, workspaceId: string, args: A) => Promise<unknown>;

/**
 * Our own MCP server: read tools over the workspace's targets, assets, findings and scans, and one tool that
 * starts a scan. Every tool calls the service layer with a context made for this call by `contextFor` (a
 * workspace API key's: member level, its workspace only), so authorization stays where it always is.
 */
export function buildMcpServer(contextFor: () => ServiceContext, log: Logger): McpServer {
  const server = new McpServer(
    { name: 'perimeter', version: '1.0.0' },
    {
      capabilities: { tools: {} },
      instructions:
        "Perimeter attack surface management, for one workspace (the API key's). Read its targets, discovered assets, vulnerability findings and scans; start a scan of a target. Lists are paged (at most 50 items).",
    },
  );

  function tool<S extends z.ZodRawShape>(name: string, description: string, shape: S, readOnly: boolean, run: Run<z.infer<z.ZodObject<S>>>) {
    const handler = async (args: z.infer<z.ZodObject<S>>): Promise<CallToolResult> => {
      const ctx = contextFor();
      // A tool that writes leaves one audit entry, with the key as actor; reading tools leave none.
      const audit = (outcome: string, result?: unknown) =>
        readOnly ? undefined : recordRequestWrite(ctx, { surface: 'mcp', operation: `mcp ${name}`, entityIds: entityIdsOf(args, result), outcome });
      try {
        const result = await run(ctx, ctx.workspaceId!, args);
        await audit('success', result);
        return { content: [{ type: 'text', text: JSON.stringify(result) }] };
      } catch (error) {
        await audit(error instanceof AppError ? error.code : 'INTERNAL');
        // Expected failures (not found, invalid input, forbidden) are answers the model can act on.
        if (error instanceof AppError) return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }] };
        log.error({ err: error, tool: name, reqId: ctx.requestId }, 'MCP tool failed');
        return { isError: true, content: [{ type: 'text', text: 'INTERNAL: Internal error' }] };
      }
    };
    server.registerTool(name, { description, inputSchema: shape, annotations: { readOnlyHint: readOnly, openWorldHint: !readOnly } }, handler as never);
  }

  tool(
    'list_targets',
    'List the targets (domains, IPs, CIDRs, URLs) of the workspace.',
    {
      ...paging,
      search: z.string().max(200).optional().describe('Text the value contains.'),
      type: z.enum(TARGET_TYPES).optional(),
      sortBy: z.enum(TARGET_SORT_FIELDS).optional(),
    },
    true,
    (ctx, workspaceId, args) => targets.listTargets(ctx, workspaceId, { ...args, ...page(args) }),
  );
  tool('get_target', 'Get one target by id.', { id: id('target') }, true, (ctx, workspaceId, args) => targets.getTarget(ctx, workspaceId, args.id));

  tool(
    'list_assets',
    'List discovered assets (hosts, services, web apps, certificates) of the workspace.',
    {
      ...paging,
      kind: z.enum(ASSET_KINDS).optional(),
      targetId: id('target').optional(),
      search: z.string().max(200).optional().describe('Text the value contains.'),
      enabled: z.boolean().optional(),
      sortBy: z.enum(ASSET_SORT_FIELDS).optional(),
    },
    true,
    (ctx, workspaceId, args) => assets.listAssets(ctx, workspaceId, { ...args, ...page(args) }),
  );
  tool('get_asset', 'Get one asset by id.', { id: id('asset') }, true, (ctx, workspaceId, args) => assets.getAsset(ctx, workspaceId, args.id));

  tool(
    'list_findings',
    'List vulnerability findings of the workspace (open ones unless status says otherwise).',
    {
      ...paging,
      severity: z.array(z.enum(SEVERITIES)).max(SEVERITIES.length).optional(),
      status: z.enum(FINDING_STATUS_FILTERS).optional().describe('open (default), fixed, dismissed or all.'),
      targetIds: z.array(id('target')).max(100).optional(),
      assetId: id('asset').optional(),
      q: z.string().max(200).optional().describe('Text in the name, check id or description.'),
      sortBy: z.enum(FINDING_SORT_FIELDS).optional(),
    },
    true,
    (ctx, workspaceId, args) => vulnerabilities.listFindings(ctx, workspaceId, { ...args, ...page(args) }),
  );
  tool('get_finding', 'Get one finding by id, with its history.', { id: id('finding') }, true, (ctx, workspaceId, args) =>
    vulnerabilities.getFinding(ctx, workspaceId, args.id),
  );
  tool(
    'finding_statistics',
    'Count open findings per severity, and findings per status.',
    { targetIds: z.array(id('target')).max(100).optional() },
    true,
    (ctx, workspaceId, args) => vulnerabilities.findingStatistics(ctx, workspaceId, args),
  );

  tool(
    'list_scans',
    'List scans of the workspace, newest first.',
    { ...paging, targetId: id('target').optional(), status: z.enum(SCAN_STATUSES).optional(), sortBy: z.enum(['createdAt', 'finishedAt']).optional() },
    true,
    async (ctx, workspaceId, args) => {
      const result = await scans.listScans(ctx, workspaceId, { ...args, ...page(args) });
      return { ...result, data: result.data.map(toScanResponse) };
    },
  );
  tool('get_scan', 'Get one scan by id: status, progress, counters and steps.', { id: id('scan') }, true, async (ctx, workspaceId, args) =>
    toScanResponse(await scans.getScan(ctx, args.id, workspaceId)),
  );
  tool(
    'start_scan',
    "Start a scan of one of the workspace's targets (DNS, ports, HTTP, TLS, checks). Returns the new scan; poll get_scan for progress.",
    { targetId: id('target'), options: scanOptionsInput.optional().describe('Steps and limits; absent fields take safe defaults.') },
    false,
    async (ctx, workspaceId, args) => toScanResponse(await scans.startScan(ctx, workspaceId, args)),
  );

  return server;
}
