import { z } from 'zod';
import type { ServiceContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { isUuid } from '../../auth/authz.js';
import { listAssets } from '../assets/service.js';
import { ASSET_KINDS } from '../assets/schemas.js';
import { findingStatistics, listFindings } from '../vulnerabilities/service.js';
import { SEVERITIES } from '../vulnerabilities/schemas.js';
import { listScans, startScan } from '../scans/service.js';
import { SCAN_STATUSES } from '../scans/schemas.js';
import { getTarget, listTargets } from '../targets/service.js';
import type { ChatTool } from './llm.js';

/**
 * The assistant's tools. Each calls the service layer with the caller's own ServiceContext, so a tool can read or
 * do exactly what the person asking could through the API. Results are bounded before they reach the model.
 */
export interface ToolScope {
  ctx: ServiceContext;
  workspaceId: string;
  /** The question being answered: a scan starts only when the person asked for one in it. */
  question: string;
}

/**
 * Tool results carry text from scanned systems (titles, banners, finding names) into the model's context. Whatever
 * that text persuades the model to do, start_scan runs only for a question that itself asks to scan.
 */
const ASKS_TO_SCAN = /\bscan/i;

export type ToolResult = Record<string, unknown>;

interface AgentTool {
  name: string;
  description: string;
  args: z.ZodType<Record<string, unknown>>;
  run(scope: ToolScope, args: never): Promise<ToolResult>;
}

/** The most characters of one tool result fed to the model (and stored). */
export const MAX_TOOL_RESULT_CHARS = 8000;
const MAX_TOOL_ARGS_CHARS = 4000;

const limit = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback).describe(`How many to return (1-${max}).`);
const day = (date: Date | null) => (date ? date.toISOString() : null);

function tool<S extends z.ZodType<Record<string, unknown>>>(definition: {
  name: string;
  description: string;
  args: S;
  run(scope: ToolScope, args: z.infer<S>): Promise<ToolResult>;
}): AgentTool {
  return definition as unknown as AgentTool;
}

async function countAssets({ ctx, workspaceId }: ToolScope, kind?: (typeof ASSET_KINDS)[number]): Promise<ToolResult> {
  if (kind) return { kind, total: (await listAssets(ctx, workspaceId, { kind, limit: 1 })).total };
  const totals = await Promise.all(ASSET_KINDS.map(async (each) => [each, (await listAssets(ctx, workspaceId, { kind: each, limit: 1 })).total] as const));
  return { total: totals.reduce((sum, [, count]) => sum + count, 0), byKind: Object.fromEntries(totals) };
}

/** Finds a target of this workspace by id or by its exact value. */
async function findTarget({ ctx, workspaceId }: ToolScope, reference: string) {
  if (isUuid(reference)) return getTarget(ctx, workspaceId, reference);
  const wanted = reference.trim().toLowerCase().replace(/\.$/, '');
  const candidates = await listTargets(ctx, workspaceId, { search: wanted, limit: 20 });
  const exact = candidates.data.find((target) => target.value.toLowerCase() === wanted);
  if (exact) return exact;
  const similar = candidates.data.map((target) => target.value).slice(0, 5);
  throw new AppError(
    'NOT_FOUND',
    `No target "${reference}" in this workspace${similar.length ? ` (similar: ${similar.join(', ')})` : '; add it as a target first'}`,
  );
}

export const AGENT_TOOLS: AgentTool[] = [
  tool({
    name: 'count_assets',
    description: 'Count the assets of the inventory, in total and by kind (host, service, web, certificate), or of one kind.',
    args: z.object({ kind: z.enum(ASSET_KINDS).optional().describe('Count only this kind.') }).strict(),
    run: (scope, args) => countAssets(scope, args.kind),
  }),
  tool({
    name: 'list_assets',
    description: 'List assets of the inventory, most recently seen first; optionally of one kind or matching a text.',
    args: z.object({ kind: z.enum(ASSET_KINDS).optional(), search: z.string().max(200).optional(), limit: limit(20, 10) }).strict(),
    run: async ({ ctx, workspaceId }, args) => {
      const page = await listAssets(ctx, workspaceId, { kind: args.kind, search: args.search, limit: args.limit });
      return {
        total: page.total,
        items: page.data.map((asset) => ({ value: asset.value, kind: asset.kind, enabled: asset.enabled, lastSeenAt: day(asset.lastSeenAt) })),
      };
    },
  }),
  tool({
    name: 'count_findings_by_severity',
    description: 'Statistics of security findings: open findings per severity (critical, high, medium, low, info) and findings per status.',
    args: z.object({}).strict(),
    run: async ({ ctx, workspaceId }) => {
      const statistics = await findingStatistics(ctx, workspaceId);
      const open = Object.fromEntries(statistics.data.map((entry) => [entry.severity, entry.count]));
      return { open, totalOpen: statistics.byStatus.open, byStatus: statistics.byStatus };
    },
  }),
  tool({
    name: 'list_findings',
    description: 'List open security findings, most severe first; optionally of one severity.',
    args: z.object({ severity: z.enum(SEVERITIES).optional(), limit: limit(20, 10) }).strict(),
    run: async ({ ctx, workspaceId }, args) => {
      const page = await listFindings(ctx, workspaceId, {
        severity: args.severity ? [args.severity] : undefined,
        sortBy: 'severity',
        sortOrder: 'DESC',
        limit: args.limit,
      });
      return {
        total: page.total,
        items: page.data.map((finding) => ({
          name: finding.name,
          severity: finding.severity,
          checkId: finding.checkId,
          status: finding.status,
          lastSeenAt: day(finding.lastSeenAt),
        })),
      };
    },
  }),
  tool({
    name: 'list_recent_scans',
    description: 'List the most recent scans with their target, status, progress and finding counts.',
    args: z.object({ status: z.enum(SCAN_STATUSES).optional(), limit: limit(10, 5) }).strict(),
    run: async ({ ctx, workspaceId }, args) => {
      const page = await listScans(ctx, workspaceId, { status: args.status, limit: args.limit, sortBy: 'createdAt', sortOrder: 'DESC' });
      // Recently scanned targets first: one read names the targets of recent scans.
      const targets = page.data.length ? await listTargets(ctx, workspaceId, { sortBy: 'lastScannedAt', sortOrder: 'DESC', limit: 100 }) : { data: [] };
      const targetValues = new Map(targets.data.map((target) => [target.id, target.value]));
      return {
        total: page.total,
        items: page.data.map((scan) => ({
          id: scan.id,
          target: targetValues.get(scan.targetId) ?? scan.targetId,
          status: scan.status,
          progress: scan.stepsTotal ? Math.round((scan.stepsDone / scan.stepsTotal) * 100) : 0,
          findings: { critical: scan.findingsCritical, high: scan.findingsHigh, medium: scan.findingsMedium, low: scan.findingsLow, info: scan.findingsInfo },
          createdAt: day(scan.createdAt),
          finishedAt: day(scan.finishedAt),
          ...(scan.error ? { error: scan.error } : {}),
        })),
      };
    },
  }),
  tool({
    name: 'list_targets',
    description: 'List the targets of the workspace (domains, IPs, CIDRs, URLs) with asset and open finding counts.',
    args: z.object({ search: z.string().max(200).optional(), limit: limit(50, 20) }).strict(),
    run: async ({ ctx, workspaceId }, args) => {
      const page = await listTargets(ctx, workspaceId, { search: args.search, limit: args.limit });
      return {
        total: page.total,
        items: page.data.map((target) => ({
          id: target.id,
          value: target.value,
          type: target.type,
          lastScannedAt: day(target.lastScannedAt),
          assetCount: target.assetCount,
          openFindingCount: target.findingCount,
        })),
      };
    },
  }),
  tool({
    name: 'start_scan',
    description: 'Start a scan of one existing target. Only when the user explicitly asks to scan something.',
    args: z.object({ target: z.string().min(1).max(2048).describe('The target: its value (e.g. example.com) or its id.') }).strict(),
    run: async (scope, args) => {
      if (!ASKS_TO_SCAN.test(scope.question)) throw new AppError('FORBIDDEN', 'A scan starts only when the user explicitly asks for one');
      const target = await findTarget(scope, args.target);
      const scan = await startScan(scope.ctx, scope.workspaceId, { targetId: target.id });
      return { scanId: scan.id, target: target.value, status: scan.status, steps: scan.steps.map((step) => step.name) };
    },
  }),
];

const TOOLS_BY_NAME = new Map(AGENT_TOOLS.map((each) => [each.name, each]));

/** The tools in the chat-completions `tools` format (JSON Schema from the same zod schemas that check the arguments). */
export function toolDefinitions(): ChatTool[] {
  return AGENT_TOOLS.map((each) => {
    const { $schema: _schema, ...parameters } = z.toJSONSchema(each.args, { io: 'input' }) as Record<string, unknown>;
    return { type: 'function', function: { name: each.name, description: each.description, parameters } };
  });
}

/** Keeps a result under MAX_TOOL_RESULT_CHARS: lists are cut (saying so), anything else is truncated text. */
export function boundResult(result: ToolResult, maxChars = MAX_TOOL_RESULT_CHARS): ToolResult {
  if (JSON.stringify(result).length <= maxChars) return result;
  if (Array.isArray(result.items)) {
    let items = result.items as unknown[];
    while (items.length > 1) {
      items = items.slice(0, Math.floor(items.length / 2));
      const cut = { ...result, items, truncated: true, note: `Only the first ${items.length} items are shown.` };
      if (JSON.stringify(cut).length <= maxChars) return cut;
    }
  }
  return { truncated: true, preview: JSON.stringify(result).slice(0, maxChars - 100) };
}

export interface ToolOutcome {
  args: Record<string, unknown>;
  result: ToolResult;
  isError: boolean;
}

/** Runs one tool call; every failure becomes an error result the model (and the person) can read. */
export async function runTool(scope: ToolScope, name: string, rawArgs: string | Record<string, unknown>): Promise<ToolOutcome> {
  let args: Record<string, unknown> = {};
  if (typeof rawArgs === 'string') {
    if (rawArgs.length > MAX_TOOL_ARGS_CHARS)
      return { args: { raw: `${rawArgs.slice(0, 200)}…` }, result: { error: 'The arguments are too long' }, isError: true };
    try {
      const parsed: unknown = rawArgs.trim() ? JSON.parse(rawArgs) : {};
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      args = parsed as Record<string, unknown>;
    } catch {
      return { args: { raw: rawArgs.slice(0, 500) }, result: { error: 'The arguments are not a JSON object' }, isError: true };
    }
  } else {
    args = rawArgs;
  }
  const definition = TOOLS_BY_NAME.get(name);
  if (!definition)
    return { args, result: { error: `There is no tool named "${name}"; available: ${AGENT_TOOLS.map((each) => each.name).join(', ')}` }, isError: true };
  const parsed = definition.args.safeParse(args);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
    return { args, result: { error: `Invalid arguments: ${issues}` }, isError: true };
  }
  try {
    return { args, result: boundResult(await definition.run(scope, parsed.data as never)), isError: false };
  } catch (error) {
    if (error instanceof AppError) return { args, result: { error: error.message, code: error.code }, isError: true };
    scope.ctx.deps.log.error({ err: error, tool: name }, 'agent tool failed');
    return { args, result: { error: 'The tool failed unexpectedly' }, isError: true };
  }
}
