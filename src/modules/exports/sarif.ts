import type { Severity } from '../vulnerabilities/schemas.js';
import type { ExportFindingRow } from './rows.js';

/**
 * SARIF 2.1.0 (OASIS), the format code-scanning dashboards import. A workspace's findings become one run of the
 * tool "Perimeter": one rule per check id, one result per finding. The document is written in pieces
 * (`sarifOpening`, then `sarifResult` per finding, then `SARIF_CLOSING`) so it can be streamed.
 */

export const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

type SarifLevel = 'error' | 'warning' | 'note';

const LEVEL: Record<Severity, SarifLevel> = { critical: 'error', high: 'error', medium: 'warning', low: 'note', info: 'note' };

/** GitHub code scanning reads `security-severity` (a CVSS-like score as text) to rank security results. */
const SECURITY_SEVERITY: Record<Severity, string> = { critical: '9.5', high: '8.0', medium: '5.5', low: '3.0', info: '0.0' };

/** The key of our fingerprint among a result's partial fingerprints (versioned, as SARIF recommends). */
export const FINGERPRINT_KEY = 'perimeterFingerprint/v1';

export interface SarifRuleSource {
  checkId: string;
  /** A finding name of that check (checks name their findings after themselves). */
  name: string;
  /** The most severe severity its findings have. */
  severity: Severity;
}

function sarifRule(rule: SarifRuleSource) {
  return {
    id: rule.checkId,
    shortDescription: { text: rule.name },
    defaultConfiguration: { level: LEVEL[rule.severity] },
    properties: { 'security-severity': SECURITY_SEVERITY[rule.severity], tags: ['security'] },
  };
}

/** Everything before the first result: the tool with its rules, then the opening of the results array. */
export function sarifOpening(rules: readonly SarifRuleSource[], workspace: { id: string; name: string }): string {
  const driver = { name: 'Perimeter', rules: rules.map(sarifRule) };
  const head = JSON.stringify({
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [{ tool: { driver }, automationDetails: { id: `perimeter/workspace/${workspace.id}/` }, properties: { workspace: workspace.name }, results: [] }],
  });
  // Cut the document open just inside `"results":[`, which the serializer wrote last: results follow, then the closing.
  return head.slice(0, -']}]}'.length);
}

export const SARIF_CLOSING = ']}]}';

interface Classification {
  cveId?: unknown;
  cweId?: unknown;
  cvssScore?: unknown;
  cvssMetrics?: unknown;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** An http(s) URL as a URI a SARIF reader accepts, or undefined. */
function webUri(value: string | undefined): string | undefined {
  if (!value || !/^https?:\/\//i.test(value)) return undefined;
  try {
    return new URL(value).href;
  } catch {
    return undefined;
  }
}

/**
 * Where the finding is: a web asset's URL (else the URL the check matched at) as the artifact, and always the asset
 * (or, without one, the target) as a logical location named after its host, with the asset key as its full name.
 */
function sarifLocation(row: ExportFindingRow) {
  const evidenceUrl = (row.evidence as { url?: unknown } | null)?.url;
  const uri = webUri(row.asset?.kind === 'web' ? row.asset.value : undefined) ?? webUri(typeof evidenceUrl === 'string' ? evidenceUrl : undefined);
  const name = row.asset?.value ?? row.target?.value;
  return {
    ...(uri ? { physicalLocation: { artifactLocation: { uri } } } : {}),
    ...(name ? { logicalLocations: [{ name, ...(row.asset ? { fullyQualifiedName: row.asset.key } : {}), kind: 'resource' }] } : {}),
  };
}

/** One result, serialized; `ruleIndex` points into the rules of `sarifOpening`. */
export function sarifResult(row: ExportFindingRow, ruleIndex: number): string {
  const classification = (row.classification ?? {}) as Classification;
  const location = sarifLocation(row);
  const where = row.asset?.value ?? row.target?.value;
  return JSON.stringify({
    ruleId: row.checkId,
    ...(ruleIndex >= 0 ? { ruleIndex } : {}),
    level: LEVEL[row.severity],
    message: { text: where ? `${row.name} on ${where}` : row.name },
    ...(Object.keys(location).length ? { locations: [location] } : {}),
    partialFingerprints: { [FINGERPRINT_KEY]: row.fingerprint },
    // Dismissed in Perimeter: suppressed, with who decided why, so importers do not raise it again.
    ...(row.status === 'dismissed'
      ? { suppressions: [{ kind: 'external', status: 'accepted', justification: [row.dismissReason, row.dismissComment].filter(Boolean).join(': ') }] }
      : {}),
    properties: {
      id: row.id,
      severity: row.severity,
      status: row.status,
      cve: stringList(classification.cveId),
      cwe: stringList(classification.cweId),
      ...(typeof classification.cvssScore === 'number' ? { cvssScore: classification.cvssScore } : {}),
      ...(typeof classification.cvssMetrics === 'string' ? { cvssMetrics: classification.cvssMetrics } : {}),
      source: row.source,
      occurrences: row.occurrences,
      firstSeenAt: row.firstSeenAt.toISOString(),
      lastSeenAt: row.lastSeenAt.toISOString(),
    },
  });
}
