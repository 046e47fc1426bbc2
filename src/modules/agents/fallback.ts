/**
 * Without a language model the assistant still answers what it can decide from keywords alone: counts of findings
 * and assets, recent scans, the targets, and "scan <target>". It calls the same tools a model would (so the calls are
 * recorded the same way) and words the answer itself.
 */
export interface PlannedCall {
  toolName: string;
  args: Record<string, unknown>;
}

const NOT_A_TARGET = new Set(['status', 'statuses', 'results', 'result', 'history', 'list', 'summary', 'progress', 'details', 'report', 'reports']);

/** "scan example.com", "start a scan of 10.0.0.1", "please run a new scan on https://x.test". */
const SCAN_REQUEST =
  /^\s*(?:please\s+)?(?:(?:start|run|launch|kick\s+off)\s+(?:a\s+)?(?:new\s+)?scan\s+(?:of|on|for|against)\s+|(?:re)?scan\s+)(?:the\s+)?(?:target\s+)?([^\s?!,;"'`]+)/i;

const INTENTS: [RegExp, PlannedCall][] = [
  [/\b(findings?|vulns?|vulnerabilit\w*|severit\w*|critical|issues?|risks?|cves?)\b/i, { toolName: 'count_findings_by_severity', args: {} }],
  [
    /\b(assets?|hosts?|services?|ports?|web\s*(?:apps?|sites?|applications?)|websites?|certificates?|certs?|inventory|subdomains?)\b/i,
    { toolName: 'count_assets', args: {} },
  ],
  [/\b(scans?|scanned|scanning)\b/i, { toolName: 'list_recent_scans', args: { limit: 5 } }],
  [/\b(targets?|domains?|scope)\b/i, { toolName: 'list_targets', args: { limit: 20 } }],
];

const OVERVIEW = /\b(overview|summary|summari[sz]e|posture|dashboard|status report)\b/i;

export function planFallback(question: string): PlannedCall[] {
  const scan = SCAN_REQUEST.exec(question);
  if (scan && !NOT_A_TARGET.has(scan[1]!.toLowerCase())) return [{ toolName: 'start_scan', args: { target: scan[1]!.replace(/[.:]+$/, '') } }];
  if (OVERVIEW.test(question)) return INTENTS.map(([, call]) => call);
  return INTENTS.filter(([pattern]) => pattern.test(question)).map(([, call]) => call);
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

type Result = Record<string, unknown>;

function describe(toolName: string, result: Result, isError: boolean): string {
  if (isError) return toolName === 'start_scan' ? `I could not start the scan: ${String(result.error)}.` : `I could not read that: ${String(result.error)}.`;
  switch (toolName) {
    case 'count_findings_by_severity': {
      const open = result.open as Record<string, number>;
      const byStatus = result.byStatus as Record<string, number>;
      const total = Number(result.totalOpen);
      const closed = `${plural(byStatus.fixed ?? 0, 'finding')} fixed and ${byStatus.dismissed ?? 0} dismissed.`;
      if (!total) return `There are no open findings. ${closed}`;
      const parts = Object.entries(open).map(([severity, count]) => `${count} ${severity}`);
      return `Open findings: ${parts.join(', ')} (${total} in total). ${closed}`;
    }
    case 'count_assets': {
      const byKind = result.byKind as Record<string, number>;
      if (!result.total) return 'The inventory has no assets yet.';
      const names: Record<string, [string, string]> = {
        host: ['host', 'hosts'],
        service: ['service', 'services'],
        web: ['web application', 'web applications'],
        certificate: ['certificate', 'certificates'],
      };
      const parts = Object.entries(byKind).map(([kind, count]) => plural(count, ...(names[kind] ?? [kind, `${kind}s`])));
      return `Assets: ${parts.join(', ')} (${result.total} in total).`;
    }
    case 'list_recent_scans': {
      const items = result.items as { target: string; status: string; progress: number; createdAt: string }[];
      if (!items.length) return 'No scans have been run yet.';
      const lines = items.map((scan) => `- ${scan.target}: ${scan.status} (${scan.progress}%), started ${scan.createdAt.slice(0, 16).replace('T', ' ')} UTC`);
      return `Recent scans (${result.total} in total):\n${lines.join('\n')}`;
    }
    case 'list_targets': {
      const items = result.items as { value: string; type: string }[];
      if (!items.length) return 'There are no targets yet.';
      const more = Number(result.total) - items.length;
      return `Targets (${result.total}): ${items.map((target) => `${target.value} (${target.type})`).join(', ')}${more > 0 ? `, and ${more} more` : ''}.`;
    }
    case 'start_scan':
      return `Started a scan of ${String(result.target)} (scan ${String(result.scanId)}, ${String(result.status)}).`;
    default:
      return '';
  }
}

export const NEEDS_A_MODEL =
  'No language model is configured for this workspace, so I can only answer from the inventory directly: open findings by severity, ' +
  'assets by kind, recent scans, the list of targets, or "scan <target>" to start a scan. Anything else needs a language model: ' +
  'a workspace owner can configure one (PUT /api/v1/api/agents/model-config), or an instance administrator for every workspace.';

export function composeFallbackAnswer(outcomes: { toolName: string; result: Result; isError: boolean }[]): string {
  if (!outcomes.length) return NEEDS_A_MODEL;
  const body = outcomes.map((outcome) => describe(outcome.toolName, outcome.result, outcome.isError)).filter(Boolean);
  return `${body.join('\n\n')}\n\n(Answered from the inventory without a language model; other questions need one to be configured.)`;
}
