/**
 * Counts classified files into the coverage report and prints it as plain-text (Markdown) tables.
 */
import type { ClassifiedFile, TemplateStatus } from './classify.js';

export interface Counts {
  total: number;
  loaded: number;
  warnings: number;
  rejected: number;
}

export interface CauseCount {
  cause: string;
  /** Templates with this cause (a template counts once per cause, however often the engine reports it). */
  templates: number;
}

export interface GoalShare {
  label: string;
  loaded: number;
  total: number;
  percent: number;
  /** Of `loaded`: templates that need variables from the user (they run once the values are given). */
  needUserVariables: number;
}

export interface CoverageReport {
  folder: string;
  /** *.yaml / *.yml files read. */
  yamlFiles: number;
  /** YAML files without top-level `id` and `info` (payload lists, helpers): not counted below. */
  nonTemplates: number;
  totals: Counts;
  byProtocol: Record<string, Counts>;
  byFolder: Record<string, Counts>;
  /** Second-level folders under `http/` (`http/cves`, ...). */
  byHttpFolder: Record<string, Counts>;
  topWarningCauses: CauseCount[];
  topRejectionCauses: CauseCount[];
  /** Variables templates need from the user (`{{username}}`...), by how many loaded templates need each. */
  topUserVariables: CauseCount[];
  goals: GoalShare[];
  elapsedMs: number;
}

export const TOP_WARNING_CAUSES = 25;
export const TOP_REJECTION_CAUSES = 15;
export const TOP_USER_VARIABLES = 10;

/** The issue's goal: which folders must load cleanly, minus the http/ folders that are out of scope. */
const GOALS: Array<{ folder: string; excluded: string[] }> = [
  { folder: 'http', excluded: ['osint', 'token-spray', 'credential-stuffing'] },
  { folder: 'dns', excluded: [] },
  { folder: 'ssl', excluded: [] },
  { folder: 'network', excluded: [] },
];

/** A template file's path relative to the scanned folder, `/`-separated, and what it is. */
export interface FileOutcome {
  relativePath: string;
  classified: ClassifiedFile;
}

const emptyCounts = (): Counts => ({ total: 0, loaded: 0, warnings: 0, rejected: 0 });

function add(table: Record<string, Counts>, key: string, status: TemplateStatus): void {
  const counts = table[key] ?? emptyCounts();
  table[key] = counts;
  counts.total += 1;
  counts[status] += 1;
}

function topCauses(counts: Map<string, number>, limit: number): CauseCount[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([cause, templates]) => ({ cause, templates }));
}

const percentOf = (part: number, whole: number): number => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10);

function sortedTable(table: Record<string, Counts>): Record<string, Counts> {
  return Object.fromEntries(Object.entries(table).sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0])));
}

export function buildReport(folder: string, files: FileOutcome[], elapsedMs: number): CoverageReport {
  const totals = emptyCounts();
  const byProtocol: Record<string, Counts> = {};
  const byFolder: Record<string, Counts> = {};
  const byHttpFolder: Record<string, Counts> = {};
  const warningCauses = new Map<string, number>();
  const rejectionCauses = new Map<string, number>();
  const userVariables = new Map<string, number>();
  const goalCounts = GOALS.map(() => ({ loaded: 0, total: 0, needUserVariables: 0 }));
  let nonTemplates = 0;

  for (const { relativePath, classified } of files) {
    if (!classified.template) {
      nonTemplates += 1;
      continue;
    }
    const { status } = classified;
    const segments = relativePath.split('/');
    const top = segments.length > 1 ? segments[0]! : '(root)';
    totals.total += 1;
    totals[status] += 1;
    add(byProtocol, classified.protocol, status);
    add(byFolder, top, status);
    if (top === 'http' && segments.length > 2) add(byHttpFolder, `http/${segments[1]}`, status);
    const causes = status === 'warnings' ? warningCauses : status === 'rejected' ? rejectionCauses : undefined;
    for (const cause of causes ? classified.causes : []) causes!.set(cause, (causes!.get(cause) ?? 0) + 1);
    const needs = status === 'loaded' && classified.userVariables.length > 0;
    if (status === 'loaded') for (const name of classified.userVariables) userVariables.set(name, (userVariables.get(name) ?? 0) + 1);
    GOALS.forEach((goal, i) => {
      if (top !== goal.folder || (segments.length > 2 && goal.excluded.includes(segments[1]!))) return;
      goalCounts[i]!.total += 1;
      if (status === 'loaded') goalCounts[i]!.loaded += 1;
      if (needs) goalCounts[i]!.needUserVariables += 1;
    });
  }

  return {
    folder,
    yamlFiles: files.length,
    nonTemplates,
    totals,
    byProtocol: sortedTable(byProtocol),
    byFolder: sortedTable(byFolder),
    byHttpFolder: sortedTable(byHttpFolder),
    topWarningCauses: topCauses(warningCauses, TOP_WARNING_CAUSES),
    topRejectionCauses: topCauses(rejectionCauses, TOP_REJECTION_CAUSES),
    topUserVariables: topCauses(userVariables, TOP_USER_VARIABLES),
    goals: GOALS.map((goal, i) => ({
      label: `${goal.folder}/${goal.excluded.length ? ` excluding ${goal.excluded.map((f) => `${f}/`).join(', ')}` : ''}`,
      ...goalCounts[i]!,
      percent: percentOf(goalCounts[i]!.loaded, goalCounts[i]!.total),
    })),
    elapsedMs,
  };
}

function countsTable(title: string, column: string, table: Record<string, Counts>): string[] {
  const cell = (n: number, total: number) => `${n} (${percentOf(n, total)}%)`;
  const lines = [`## ${title}`, '', `| ${column} | templates | loaded (no warning) | with warnings | rejected |`, '| --- | ---: | ---: | ---: | ---: |'];
  for (const [key, c] of Object.entries(table)) {
    lines.push(`| ${key} | ${c.total} | ${cell(c.loaded, c.total)} | ${cell(c.warnings, c.total)} | ${cell(c.rejected, c.total)} |`);
  }
  return [...lines, ''];
}

function causesTable(title: string, causes: CauseCount[], column = 'cause'): string[] {
  const lines = [`## ${title}`, '', `| # | ${column} | templates |`, '| ---: | --- | ---: |'];
  for (const [i, c] of causes.entries()) lines.push(`| ${i + 1} | ${c.cause.replace(/\|/g, '\\|')} | ${c.templates} |`);
  return [...lines, ''];
}

export function formatReport(report: CoverageReport): string {
  const t = report.totals;
  const lines = [
    `# Template coverage of ${report.folder}`,
    '',
    `${report.yamlFiles} YAML files: ${t.total} templates, ${report.nonTemplates} not templates (no top-level id + info; not counted).`,
    `Templates: ${t.loaded} load with no warning (${percentOf(t.loaded, t.total)}%), ${t.warnings} with warnings (${percentOf(t.warnings, t.total)}%), ` +
      `${t.rejected} rejected (${percentOf(t.rejected, t.total)}%). Checked in ${(report.elapsedMs / 1000).toFixed(1)} s.`,
    '',
    '## Goal',
    '',
    ...report.goals.map(
      (g) =>
        `${g.label}: ${g.loaded} of ${g.total} load with no warning (${g.percent}%)` +
        (g.needUserVariables ? `; ${g.needUserVariables} of them need variables from the user (they run once the values are given)` : ''),
    ),
    '',
    ...countsTable('By protocol (a template with blocks of several protocols counts once, as "multi")', 'protocol', report.byProtocol),
    ...countsTable('By top-level folder', 'folder', report.byFolder),
    ...countsTable('By http/ folder', 'folder', report.byHttpFolder),
    ...causesTable(`Top ${TOP_WARNING_CAUSES} warning causes (templates loaded with warnings)`, report.topWarningCauses),
    ...causesTable(`Top ${TOP_REJECTION_CAUSES} rejection causes`, report.topRejectionCauses),
    ...causesTable(
      `Top ${TOP_USER_VARIABLES} variables templates need from the user (loaded templates; workspace template settings or a scan's templateVariables)`,
      report.topUserVariables,
      'variable',
    ),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}
