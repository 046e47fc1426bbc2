/** The `info` block: name, authors, severity, references, tags, classification. */
import { SEVERITIES, type Severity, type TemplateClassification, type TemplateInfo } from '../types.js';
import { type Ctx, isRecord, stringOrList, typeName } from './context.js';

export function parseInfo(ctx: Ctx, raw: unknown): TemplateInfo | undefined {
  if (!isRecord(raw)) {
    ctx.error(raw === undefined ? "missing required field 'info'" : `'info' must be a mapping, got ${typeName(raw)}`, raw === undefined ? [] : ['info']);
    return undefined;
  }
  const name = ctx.str(raw, 'name', ['info']);
  if (!name?.trim()) ctx.error("missing required field 'info.name'", ['info']);
  const authors = stringOrList(raw.author);
  if (authors.length === 0) ctx.warn("missing field 'info.author'", ['info']);
  let severity: Severity = 'unknown';
  const sevRaw = raw.severity;
  if (sevRaw === undefined || sevRaw === null || sevRaw === '') {
    ctx.error("missing required field 'info.severity'", ['info']);
  } else if (typeof sevRaw !== 'string' || !SEVERITIES.includes(sevRaw.trim().toLowerCase() as Severity)) {
    ctx.error(`invalid severity ${JSON.stringify(sevRaw)} (expected one of ${SEVERITIES.join(', ')})`, ['info', 'severity']);
  } else {
    severity = sevRaw.trim().toLowerCase() as Severity;
  }
  const classification: TemplateClassification = {};
  if (raw.classification !== undefined && raw.classification !== null) {
    if (!isRecord(raw.classification)) {
      ctx.warn("'info.classification' must be a mapping; ignored", ['info', 'classification']);
    } else {
      const c = raw.classification;
      const cve = stringOrList(c['cve-id']).map((x) => x.toUpperCase());
      const cwe = stringOrList(c['cwe-id']).map((x) => x.toUpperCase());
      if (cve.length) classification.cveId = cve;
      if (cwe.length) classification.cweId = cwe;
      if (typeof c['cvss-metrics'] === 'string' && c['cvss-metrics']) classification.cvssMetrics = c['cvss-metrics'];
      const score = typeof c['cvss-score'] === 'string' ? Number(c['cvss-score']) : c['cvss-score'];
      if (typeof score === 'number' && Number.isFinite(score)) classification.cvssScore = score;
      else if (c['cvss-score'] !== undefined && c['cvss-score'] !== null)
        ctx.warn("'cvss-score' must be a number; ignored", ['info', 'classification', 'cvss-score']);
      const epss = typeof c['epss-score'] === 'string' ? Number(c['epss-score']) : c['epss-score'];
      if (typeof epss === 'number' && Number.isFinite(epss)) classification.epssScore = epss;
      if (typeof c.cpe === 'string' && c.cpe) classification.cpe = c.cpe;
    }
  }
  const reference =
    raw.reference === undefined || raw.reference === null ? [] : Array.isArray(raw.reference) ? raw.reference.map(String) : [String(raw.reference)];
  return {
    name: (name ?? '').trim(),
    author: authors,
    severity,
    description: typeof raw.description === 'string' ? raw.description.trim() || undefined : undefined,
    remediation: typeof raw.remediation === 'string' ? raw.remediation.trim() || undefined : undefined,
    reference: reference.map((r) => r.trim()).filter(Boolean),
    tags: stringOrList(raw.tags),
    classification,
    metadata: isRecord(raw.metadata) ? raw.metadata : {},
  };
}
