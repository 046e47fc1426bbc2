import { REQUEST_CAP_WARNING } from './engine/run.js';
import type { FindingObservation, AssetRef, StepError } from '../index.js';
import type { NucleiTemplate, RunWarning, TemplateResult } from './index.js';
import { TEMPLATE_OUTPUT_LIMITS, toFindingObservation, type RunnableTemplate, type TemplateScanResult, type TemplateScanSummary } from './run-on-web.js';

/**
 * What the non-HTTP runners of a scan (run-on-services.ts, run-on-hosts.ts) share: which templates run, the
 * starting summary, and turning each asset's run output into bounded findings and errors.
 */

/** What one protocol run on one asset gave back. */
export interface AssetRunOutcome {
  asset: AssetRef;
  results: TemplateResult[];
  warnings: RunWarning[];
  /** Connections opened / questions asked, and those that failed. */
  sent: number;
  failed: number;
}

export interface ProtocolRun {
  runnable: NucleiTemplate[];
  summary: TemplateScanSummary;
  checkIds: string[];
}

/** The templates with blocks of the protocol (not skipped), an empty summary, and the check ids when anything is scanned. */
export function protocolRun(templates: readonly RunnableTemplate[], has: (template: NucleiTemplate) => boolean, assets: number): ProtocolRun {
  const runnable = templates.map((entry) => entry.template).filter((template) => !template.skip && has(template));
  return {
    runnable,
    summary: { templates: runnable.length, endpoints: runnable.length ? assets : 0, requestsSent: 0, requestsSaved: 0, requestsFailed: 0, truncated: 0 },
    checkIds: assets ? [...new Set(runnable.map((template) => template.id))].sort() : [],
  };
}

/**
 * Findings and errors of a protocol's runs. A warning matching `failure` means the template did not get its answer
 * from that asset: reported as an error `<templateId> <assetKey>`, so the pair fixes nothing. Results past the
 * step's bounds are dropped and their pair reported the same way.
 */
export function collectRuns(run: ProtocolRun, outcomes: readonly AssetRunOutcome[], protocol: 'network' | 'dns' | 'ssl', failure: RegExp): TemplateScanResult {
  const { summary, checkIds } = run;
  const limits = TEMPLATE_OUTPUT_LIMITS;
  const findings: FindingObservation[] = [];
  const errors: StepError[] = [];
  for (const { asset, results, warnings, sent, failed: failedRequests } of outcomes) {
    summary.requestsSent += sent;
    summary.requestsFailed += failedRequests;
    const failed = new Set<string>();
    for (const warning of warnings) {
      if (!warning.templateId || failed.has(warning.templateId) || !failure.test(warning.message)) continue;
      failed.add(warning.templateId);
      // A template stopped by its request/connection cap did not try everything either: named as such.
      const capped = warning.message.startsWith(REQUEST_CAP_WARNING) || warning.message.startsWith('connection limit of ');
      errors.push({
        code: capped ? 'TEMPLATE_REQUEST_CAP_REACHED' : 'TEMPLATE_REQUEST_FAILED',
        message: warning.message.slice(0, limits.errorMessage),
        target: `${warning.templateId} ${asset.key}`,
      });
    }
    const perTemplate = new Map<string, number>();
    for (const result of results) {
      const count = (perTemplate.get(result.templateId) ?? 0) + 1;
      perTemplate.set(result.templateId, count);
      if (count > limits.resultsPerTemplateAndEndpoint || findings.length >= limits.findingsPerStep) {
        summary.truncated += 1;
        // Not everything this pair found is stored: it must not count as "ran clean" (which would fix findings).
        if (!failed.has(result.templateId)) {
          failed.add(result.templateId);
          errors.push({
            code: 'TEMPLATE_RESULTS_TRUNCATED',
            message: 'more results than a scan step keeps; the rest were dropped',
            target: `${result.templateId} ${asset.key}`,
          });
        }
        continue;
      }
      findings.push(toFindingObservation(result, asset, protocol));
    }
  }
  findings.sort((a, b) => a.fingerprintParts.join('\0').localeCompare(b.fingerprintParts.join('\0')));
  errors.sort((a, b) => (a.target ?? '').localeCompare(b.target ?? ''));
  return { findings, errors, checkIds, summary };
}
