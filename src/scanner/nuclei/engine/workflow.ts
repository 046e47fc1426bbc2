/**
 * Runs a workflow template (nuclei pkg/core/workflow_execute.go) against one target through an injected runner of
 * single templates:
 *  - a step runs the templates its `template:` path and its `tags` name
 *  - without matchers: with subtemplates, the step's own results only decide (any result → its subtemplates run)
 *    and are not reported; without subtemplates its results are the workflow's results
 *  - with matchers: the step's results are not reported; each matcher whose names (`or`: one of them, `and`: all)
 *    appear as matcher or extractor names of those results runs its subtemplates
 *
 * Differences from nuclei, by choice: a template runs at most once per workflow run (a later step naming it again
 * reuses its results), so several matchers sharing a subtemplate do not repeat its requests; an `and` name matcher
 * looks at all of a template's results on the target, not one event at a time; extracted values are not passed on
 * to subtemplates as variables; nested workflows are not followed.
 */
import type { NucleiTemplate, RunWarning, TemplateResult, WorkflowStep } from '../types.js';

/** Finds the templates a step names, among those available to the run. */
export interface WorkflowCatalog {
  byPath(path: string): NucleiTemplate[];
  byTags(tags: string[]): NucleiTemplate[];
}

export type WorkflowTemplateRunner = (template: NucleiTemplate) => Promise<TemplateResult[]>;

export interface WorkflowRunOptions {
  /** Distinct templates one workflow run may start. Default 300. */
  maxTemplates?: number;
  onWarning?: (warning: RunWarning) => void;
  signal?: AbortSignal;
}

const TEMPLATE_FILE = /\.ya?ml$/i;

/**
 * A catalog over the templates of a workspace. Imported templates do not keep their archive path (the import
 * names them after their file, see src/modules/templates), so a path is resolved by its file name: the template
 * whose id is the file's stem (the public library's rule: `http/technologies/tech-detect.yaml` holds id
 * `tech-detect`). A folder path cannot be resolved this way and names no template.
 */
export function workflowCatalog(templates: readonly NucleiTemplate[]): WorkflowCatalog {
  const runnable = templates.filter((t) => !t.workflow);
  const byId = new Map(runnable.map((t) => [t.id.toLowerCase(), t]));
  return {
    byPath(path) {
      const file = path.replace(/\\/g, '/').split('/').pop() ?? '';
      if (!TEMPLATE_FILE.test(file)) return [];
      const t = byId.get(file.replace(TEMPLATE_FILE, '').toLowerCase());
      return t ? [t] : [];
    },
    byTags(tags) {
      const wanted = new Set(tags.map((t) => t.toLowerCase()));
      return runnable.filter((t) => t.info.tags.some((tag) => wanted.has(tag.toLowerCase())));
    },
  };
}

export async function runWorkflow(
  workflow: NucleiTemplate,
  catalog: WorkflowCatalog,
  run: WorkflowTemplateRunner,
  options: WorkflowRunOptions = {},
): Promise<{ results: TemplateResult[]; warnings: RunWarning[] }> {
  const warnings: RunWarning[] = [];
  const warn = (message: string, path?: string) => {
    const w: RunWarning = { templateId: workflow.id, path, message };
    warnings.push(w);
    options.onWarning?.(w);
  };
  const maxTemplates = options.maxTemplates ?? 300;
  const ran = new Map<string, Promise<TemplateResult[]>>();
  const reported: TemplateResult[] = [];
  let limitWarned = false;

  const runOnce = (template: NucleiTemplate): Promise<TemplateResult[]> => {
    let results = ran.get(template.id);
    if (!results) {
      if (ran.size >= maxTemplates) {
        if (!limitWarned) warn(`workflow stopped starting templates: it reached its limit of ${maxTemplates}`);
        limitWarned = true;
        return Promise.resolve([]);
      }
      results = run(template).catch((err: Error) => {
        warn(`template failed: ${template.id}: ${err.message}`);
        return [];
      });
      ran.set(template.id, results);
    }
    return results;
  };

  const executers = (step: WorkflowStep, path: string): NucleiTemplate[] => {
    const found = new Map<string, NucleiTemplate>();
    if (step.template) {
      const named = catalog.byPath(step.template);
      if (!named.length) warn(`workflow template ${step.template} is not among this workspace's templates; step skipped`, path);
      for (const t of named) found.set(t.id, t);
    }
    if (step.tags.length) for (const t of catalog.byTags(step.tags)) found.set(t.id, t);
    return [...found.values()].filter((t) => t.id !== workflow.id);
  };

  const runSteps = async (steps: WorkflowStep[], path: string): Promise<void> => {
    for (const [i, step] of steps.entries()) {
      if (options.signal?.aborted) return;
      await runStep(step, `${path}[${i}]`);
    }
  };

  const runStep = async (step: WorkflowStep, path: string): Promise<void> => {
    const templates = executers(step, path);
    const results: TemplateResult[] = [];
    for (const template of templates) {
      if (options.signal?.aborted) return;
      results.push(...(await runOnce(template)));
    }
    if (step.matchers.length) {
      const names = new Set(results.flatMap((r) => [r.matcherName, r.extractorName]).filter((n): n is string => Boolean(n)));
      for (const [j, matcher] of step.matchers.entries()) {
        const hit =
          matcher.names.length > 0 && (matcher.condition === 'and' ? matcher.names.every((n) => names.has(n)) : matcher.names.some((n) => names.has(n)));
        if (hit) await runSteps(matcher.subtemplates, `${path}.matchers[${j}].subtemplates`);
      }
      return;
    }
    if (!step.subtemplates.length) {
      reported.push(...results);
      return;
    }
    if (results.length) await runSteps(step.subtemplates, `${path}.subtemplates`);
  };

  await runSteps(workflow.workflow ?? [], 'workflows');
  // the same template reached through two steps reports once
  const seen = new Set<string>();
  const results = reported.filter((r) => {
    const key = JSON.stringify([r.templateId, r.matcherName ?? '', r.extractorName ?? '', r.matchedUrl, r.extractedResults]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { results, warnings };
}
