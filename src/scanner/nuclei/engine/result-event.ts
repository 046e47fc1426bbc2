import { excerpt } from '../bytes.js';
import type { NucleiTemplate, TemplateResult } from '../types.js';
import type { OperatorResult } from './operators.js';

const REQUEST_EXCERPT = 4 * 1024;
const RESPONSE_EXCERPT = 8 * 1024;

/** What an event of any protocol shows: where it matched, what was sent, what came back. */
export interface EventText {
  matched: string;
  request: string;
  response: string;
}

/**
 * The results of one event, as nuclei's MakeDefaultResultEvent builds them for every protocol: one per matched
 * named matcher, else one per named extractor, else one. Whether the event is written at all is the runner's call.
 */
export function resultEvents(tpl: NucleiTemplate, op: OperatorResult, text: EventText): TemplateResult[] {
  const info = tpl.info;
  const c = info.classification;
  const classification: TemplateResult['classification'] = {};
  if (c.cveId?.length) classification.cveId = c.cveId;
  if (c.cweId?.length) classification.cweId = c.cweId;
  if (c.cvssMetrics) classification.cvssMetrics = c.cvssMetrics;
  if (c.cvssScore !== undefined) classification.cvssScore = c.cvssScore;
  const base = (): TemplateResult => ({
    templateId: tpl.id,
    templateName: info.name,
    severity: info.severity,
    extractedResults: [...op.outputExtracts],
    matchedUrl: text.matched,
    request: excerpt(text.request, REQUEST_EXCERPT),
    response: excerpt(text.response, RESPONSE_EXCERPT),
    classification,
    remediation: info.remediation,
    description: info.description,
    reference: info.reference.length ? info.reference : undefined,
    tags: info.tags.length ? info.tags : undefined,
    author: info.author.length ? info.author : undefined,
  });
  if (op.matches.length) return op.matches.map((name) => ({ ...base(), matcherName: name }));
  if (op.extracts.size) return [...op.extracts].map(([name, values]) => ({ ...base(), extractorName: name, extractedResults: values }));
  return [base()];
}
