/**
 * The entry points of HTTP template runs (engine/run.ts runs one template): a run context (target, deps,
 * counters, shared cluster cache) and bounded concurrency over templates.
 */
import type { NucleiTemplate, RunDeps, RunOutput, RunStats, ScanTarget, TemplateResult } from '../types.js';
import { withoutOast } from '../oast.js';
import { parseTarget } from './target.js';
import { runFlowTemplate } from './flow.js';
import { type RunContext, TemplateRun } from './run.js';

const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; Perimeter-Nuclei/1.0)';

export function createRunStats(): RunStats {
  return { requestsSent: 0, requestsSaved: 0, requestsFailed: 0, templatesRun: 0, templatesSkipped: 0 };
}

/**
 * Run templates against a target and return findings plus run-time warnings and counters.
 * Templates run with bounded concurrency; results keep the order of `templates`.
 */
export function createRunContext(target: ScanTarget, deps: RunDeps): RunContext {
  return {
    target: target.baseUrl === undefined ? undefined : parseTarget(target.baseUrl),
    deps,
    stats: deps.stats ?? createRunStats(),
    warnings: [],
    cache: deps.cluster ? new Map() : undefined,
    userAgent: deps.userAgent ?? DEFAULT_USER_AGENT,
    timeoutMs: deps.timeoutMs ?? 10_000,
    maxRequests: Math.max(1, deps.maxRequestsPerTemplate ?? 100),
  };
}

export async function runTemplatesDetailed(templates: NucleiTemplate[], target: ScanTarget, deps: RunDeps): Promise<RunOutput> {
  const ctx = createRunContext(target, deps);
  const stats = ctx.stats;
  const perTemplate: TemplateResult[][] = templates.map(() => []);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= templates.length) return;
      if (deps.signal?.aborted) return;
      try {
        // a template using OAST is skipped with the reason when there is no client to give it URLs
        const template = deps.oast ? templates[i] : withoutOast(templates[i]);
        perTemplate[i] = template.flow ? await runFlowTemplate(template, ctx) : await new TemplateRun(template, ctx).run();
      } catch (err) {
        const w = { templateId: templates[i].id, message: `template failed: ${(err as Error).message}` };
        ctx.warnings.push(w);
        deps.onWarning?.(w);
      }
    }
  };
  const workers = Math.max(1, Math.min(deps.concurrency ?? 4, templates.length || 1));
  await Promise.all(Array.from({ length: workers }, worker));
  return { results: perTemplate.flat(), warnings: ctx.warnings, stats };
}

/** Run templates against a target; see runTemplatesDetailed for warnings and counters (or pass `deps.stats`). */
export async function runTemplates(templates: NucleiTemplate[], target: ScanTarget, deps: RunDeps): Promise<TemplateResult[]> {
  return (await runTemplatesDetailed(templates, target, deps)).results;
}
