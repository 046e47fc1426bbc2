import type { ServiceContext } from '../../context.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import { validate } from '../../validate.js';
import type { FindingObservation } from '../../scanner/index.js';
import { upsertAssets, type AssetInput } from '../assets/ingest.js';
import { recordProvenance } from '../assets/discovery.js';
import { publishChanges, trackChanges } from '../changes/record.js';
import type { ChangeEventRecord } from '../changes/types.js';
import { recordFindings } from '../vulnerabilities/ingest.js';
import { targetScopeMatcher } from '../targets/service.js';
import type { AuthenticatedTool } from './keys.js';
import { effectiveEnabled } from './service.js';
import { fromJsonItem, locate, locationOfAssetItem, parseNucleiLine, toObservation, type ReportedFinding, type ToolLocation } from './normalize.js';
import { MAX_RESULT_LINES, submitResultsInput, toolAssetItem, toolFindingItem, type SubmitResultsInput } from './schemas.js';

export interface ResultError {
  /** nuclei-jsonl: the line number (1-based). json: the item's position in its list (1-based). */
  line: number;
  /** json: which item and field, e.g. `findings[2].severity`. */
  path?: string;
  message: string;
}

export interface SubmissionReport {
  toolId: string;
  workspaceId: string;
  /** Lines or items that became a finding or an asset. */
  accepted: number;
  /** Lines or items refused, each explained by one entry of errors. */
  rejected: number;
  /** nuclei lines that are not matches (matcher-status false). */
  skipped: number;
  errors: ResultError[];
  assets: { created: number; seen: number };
  findings: { opened: number; seen: number; reopened: number };
}

/** Errors listed in a report; the counts stay exact beyond it. */
const MAX_REPORTED_ERRORS = 100;
/** Large submissions write thousands of rows in one transaction: more than Prisma's default 5 s. */
const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 120_000 };

/** What a line or item yielded, with where the tool saw it: that decides which targets it belongs to. */
interface Placed<T> {
  item: T;
  place: ToolLocation;
}

interface Parsed {
  assets: Placed<AssetInput>[];
  findings: Placed<FindingObservation>[];
  accepted: number;
  skipped: number;
  errors: ResultError[];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The workspace a submission lands in: the one the key was made in, whatever the tool. X-Workspace-Id may
 * repeat it; naming another workspace is refused before anything is written. The tool must be enabled there.
 */
async function targetWorkspace(ctx: ServiceContext, caller: AuthenticatedTool) {
  const { tool, workspaceId } = caller;
  if (ctx.workspaceId && ctx.workspaceId.toLowerCase() !== workspaceId) throw new ForbiddenError("A tool's key submits to the workspace it was made in only");
  const workspace = await ctx.deps.prisma.workspace.findUnique({
    where: { id: workspaceId },
    select: { id: true, isAutoEnableAssetAfterDiscovered: true, toolSettings: { where: { toolId: tool.id }, select: { enabled: true } } },
  });
  if (!workspace) throw new NotFoundError('Workspace');
  if (!effectiveEnabled(tool, workspace.toolSettings[0])) throw new ForbiddenError(`The tool ${tool.name} is disabled in this workspace`);
  return workspace;
}

function parseNucleiJsonl(data: string, source: string): Parsed {
  const lines = data.split(/\r?\n/);
  const nonEmpty = lines.reduce((count, line) => count + (line.trim() ? 1 : 0), 0);
  if (nonEmpty > MAX_RESULT_LINES) {
    throw new ValidationError(`Too many results: ${nonEmpty} lines, at most ${MAX_RESULT_LINES} per submission`, [
      { field: 'data', message: `must hold at most ${MAX_RESULT_LINES} lines` },
    ]);
  }
  const parsed: Parsed = { assets: [], findings: [], accepted: 0, skipped: 0, errors: [] };
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    try {
      const result = parseNucleiLine(line);
      if (result.kind === 'skipped') {
        parsed.skipped += 1;
        return;
      }
      addFinding(parsed, result.finding, source);
      parsed.accepted += 1;
    } catch (error) {
      parsed.errors.push({ line: index + 1, message: messageOf(error) });
    }
  });
  return parsed;
}

function addFinding(parsed: Parsed, finding: ReportedFinding, source: string): void {
  const located = locate(finding.location, source);
  parsed.assets.push(...located.assets.map((item) => ({ item, place: finding.location })));
  parsed.findings.push({ item: toObservation(finding, located, source), place: finding.location });
}

function issuesOf(list: string, index: number, issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): ResultError[] {
  return issues.map((issue) => ({
    line: index + 1,
    path: `${list}[${index}]${issue.path.map((part) => `.${String(part)}`).join('')}`,
    message: issue.message,
  }));
}

function parseJsonItems(input: { findings: unknown[]; assets?: unknown[] }, source: string): Parsed {
  const parsed: Parsed = { assets: [], findings: [], accepted: 0, skipped: 0, errors: [] };
  input.findings.forEach((raw, index) => {
    const result = toolFindingItem.safeParse(raw);
    if (!result.success) {
      parsed.errors.push(...issuesOf('findings', index, result.error.issues).slice(0, 1));
      return;
    }
    try {
      addFinding(parsed, fromJsonItem(result.data), source);
      parsed.accepted += 1;
    } catch (error) {
      parsed.errors.push({ line: index + 1, path: `findings[${index}]`, message: messageOf(error) });
    }
  });
  (input.assets ?? []).forEach((raw, index) => {
    const result = toolAssetItem.safeParse(raw);
    if (!result.success) {
      parsed.errors.push(...issuesOf('assets', index, result.error.issues).slice(0, 1));
      return;
    }
    try {
      const place = locationOfAssetItem(result.data);
      parsed.assets.push(...locate(place, source).assets.map((item) => ({ item, place })));
      parsed.accepted += 1;
    } catch (error) {
      parsed.errors.push({ line: index + 1, path: `assets[${index}]`, message: messageOf(error) });
    }
  });
  return parsed;
}

/** A row another writer created (P2002), or a target deleted (P2003) between our read and our insert. */
function isRaceWithOtherWriter(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'P2002' || code === 'P2003';
}

/** Each asset and finding carries the ids of the workspace's targets whose scope covers where it was seen. */
function withTargets<T>(placed: Placed<T>[], covering: (place: ToolLocation) => string[]): (T & { targetIds: string[] })[] {
  const memo = new Map<ToolLocation, string[]>();
  return placed.map(({ item, place }) => {
    const targetIds = memo.get(place) ?? covering(place);
    memo.set(place, targetIds);
    return { ...item, targetIds };
  });
}

/**
 * Ingests a tool's results into the workspace through the same functions native scans use: assets by natural
 * key, findings by fingerprint (check id, asset key, matcher), so what a scan also found is one row seen
 * twice. Lines and items are judged one by one; the good ones are written in one transaction. Each is
 * linked to every target of the workspace whose scope covers where the tool saw it.
 */
export async function submitToolResults(ctx: ServiceContext, caller: AuthenticatedTool, input: SubmitResultsInput): Promise<SubmissionReport> {
  const workspace = await targetWorkspace(ctx, caller);
  const body = validate(submitResultsInput, input);
  const source = caller.tool.name;
  const parsed =
    body.format === 'nuclei-jsonl' ? parseNucleiJsonl(body.data ?? '', source) : parseJsonItems({ findings: body.findings ?? [], assets: body.assets }, source);

  const scope = { workspaceId: workspace.id, targetId: null, scanId: null, autoEnable: workspace.isAutoEnableAssetAfterDiscovered, now: new Date() };
  const write = () =>
    ctx.deps.prisma.$transaction(async (tx) => {
      const changes = trackChanges(tx);
      // One submission at a time per workspace: two tools reporting the same new asset would otherwise race
      // on its natural key.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`tool-results:${workspace.id}`})::bigint)`;
      const covering = await targetScopeMatcher(tx, workspace.id);
      const assets = await upsertAssets(tx, scope, withTargets(parsed.assets, covering));
      // Hosts a tool reported are in the inventory because of that tool: their provenance says so.
      const imported = [...new Set(parsed.assets.filter(({ item }) => item.kind === 'host').map(({ item }) => assets.idByKey.get(item.key)))]
        .filter((id): id is string => !!id)
        .map((assetId) => ({ assetId, origin: { source: 'import' as const, from: source } }));
      if (imported.length) await recordProvenance(tx, scope, imported);
      const recorded = parsed.findings.length
        ? await recordFindings(tx, scope, withTargets(parsed.findings, covering), assets.idByKey)
        : { opened: [], seen: [], reopened: [] };
      return { assets, recorded, changes };
    }, TRANSACTION_OPTIONS);
  const nothing = {
    assets: { created: [], idByKey: new Map<string, string>() },
    recorded: { opened: [] as string[], seen: [] as string[], reopened: [] as string[] },
    changes: [] as ChangeEventRecord[],
  };
  // A scan may create the same asset or finding (or a target may go) between our read and our insert: the
  // retry reads again.
  const { assets, recorded, changes } =
    !parsed.assets.length && !parsed.findings.length
      ? nothing
      : await write().catch((error: unknown) => (isRaceWithOtherWriter(error) ? write() : Promise.reject(error)));

  // The same typed events as a scan's: written with the change, published after the commit.
  publishChanges(ctx.deps, changes);
  const uniqueAssets = new Set(parsed.assets.map((asset) => asset.item.key)).size;
  return {
    toolId: caller.tool.id,
    workspaceId: workspace.id,
    accepted: parsed.accepted,
    rejected: parsed.errors.length,
    skipped: parsed.skipped,
    errors: parsed.errors.slice(0, MAX_REPORTED_ERRORS),
    assets: { created: assets.created.length, seen: uniqueAssets - assets.created.length },
    findings: { opened: recorded.opened.length, seen: recorded.seen.length, reopened: recorded.reopened.length },
  };
}
