import { excerpt } from '../bytes.js';
import type { HttpSendResponse, NucleiTemplate, TemplateResult } from '../types.js';
import type { OperatorResult } from './operators.js';
import type { BuiltRequest } from './requests.js';

const REQUEST_EXCERPT = 4 * 1024;
const RESPONSE_EXCERPT = 8 * 1024;

/**
 * The results of one http event, as nuclei's MakeDefaultResultEvent builds them: one per matched named matcher,
 * else one per named extractor, else one. Whether the event is written at all is the run's decision (run.ts).
 */
export function httpResults(tpl: NucleiTemplate, op: OperatorResult, resp: HttpSendResponse, req: BuiltRequest): TemplateResult[] {
  const base = (): TemplateResult => {
    const info = tpl.info;
    const c = info.classification;
    const classification: TemplateResult['classification'] = {};
    if (c.cveId?.length) classification.cveId = c.cveId;
    if (c.cweId?.length) classification.cweId = c.cweId;
    if (c.cvssMetrics) classification.cvssMetrics = c.cvssMetrics;
    if (c.cvssScore !== undefined) classification.cvssScore = c.cvssScore;
    return {
      templateId: tpl.id,
      templateName: info.name,
      severity: info.severity,
      extractedResults: [...op.outputExtracts],
      matchedUrl: resp.finalUrl || req.url,
      request: excerpt(resp.rawRequest, REQUEST_EXCERPT),
      response: excerpt(resp.rawResponse, RESPONSE_EXCERPT),
      classification,
      remediation: info.remediation,
      description: info.description,
      reference: info.reference.length ? info.reference : undefined,
      tags: info.tags.length ? info.tags : undefined,
      author: info.author.length ? info.author : undefined,
    };
  };
  if (op.matches.length) return op.matches.map((name) => ({ ...base(), matcherName: name }));
  if (op.extracts.size) return [...op.extracts].map(([name, values]) => ({ ...base(), extractorName: name, extractedResults: values }));
  return [base()];
}
