/**
 * A workflow template's `workflows:` list (nuclei pkg/workflows): steps naming a template (a path such as
 * `http/technologies/tech-detect.yaml`) and/or tags, with subtemplates run when the step's template matched, or
 * name matchers (`name`, `condition`) whose subtemplates run when a result carries one of those matcher or
 * extractor names. engine/workflow.ts runs them.
 */
import type { WorkflowMatcher, WorkflowStep } from '../types.js';
import { type Ctx, isRecord, stringOrList, typeName } from './context.js';

const MAX_DEPTH = 8;
const MAX_STEPS = 500;
const STEP_FIELDS = new Set(['template', 'tags', 'matchers', 'subtemplates']);

export function parseWorkflowSteps(ctx: Ctx, raw: unknown): WorkflowStep[] {
  let count = 0;
  const steps = (list: unknown, segs: Array<string | number>, depth: number): WorkflowStep[] => {
    if (!Array.isArray(list)) {
      ctx.error(`'${segs.join('.')}' must be a list of workflow steps, got ${typeName(list)}`, segs);
      return [];
    }
    if (depth > MAX_DEPTH) {
      ctx.error(`workflow steps nested deeper than ${MAX_DEPTH} levels`, segs);
      return [];
    }
    const out: WorkflowStep[] = [];
    list.forEach((item, i) => {
      const at = [...segs, i];
      if (++count > MAX_STEPS) {
        if (count === MAX_STEPS + 1) ctx.error(`a workflow may have at most ${MAX_STEPS} steps`, at);
        return;
      }
      if (!isRecord(item)) {
        ctx.error(`a workflow step must be a mapping, got ${typeName(item)}`, at);
        return;
      }
      for (const key of Object.keys(item)) if (!STEP_FIELDS.has(key)) ctx.warn(`unknown workflow step field '${key}' ignored`, [...at, key], true);
      const template = typeof item.template === 'string' && item.template.trim() ? item.template.trim() : undefined;
      if (item.template !== undefined && !template) ctx.error("'template' must be a template path", [...at, 'template']);
      const tags = stringOrList(item.tags)
        .flatMap((t) => t.split(','))
        .map((t) => t.trim().toLowerCase())
        .filter(Boolean);
      if (!template && !tags.length) ctx.error("a workflow step needs 'template' or 'tags'", at);
      const matchers: WorkflowMatcher[] = [];
      if (item.matchers !== undefined && item.matchers !== null) {
        if (!Array.isArray(item.matchers)) ctx.error(`'matchers' must be a list, got ${typeName(item.matchers)}`, [...at, 'matchers']);
        else
          item.matchers.forEach((m, j) => {
            const mAt = [...at, 'matchers', j];
            if (!isRecord(m)) {
              ctx.error(`a workflow matcher must be a mapping, got ${typeName(m)}`, mAt);
              return;
            }
            const names = stringOrList(m.name)
              .map((n) => n.trim())
              .filter(Boolean);
            if (!names.length) ctx.warn("workflow matcher without 'name' never matches", mAt, true);
            const condition = m.condition === undefined || m.condition === null ? 'or' : String(m.condition).toLowerCase();
            if (condition !== 'and' && condition !== 'or')
              ctx.error(`unknown condition ${JSON.stringify(m.condition)} (expected and, or)`, [...mAt, 'condition']);
            const subtemplates = m.subtemplates === undefined || m.subtemplates === null ? [] : steps(m.subtemplates, [...mAt, 'subtemplates'], depth + 1);
            matchers.push({ names, condition: condition === 'and' ? 'and' : 'or', subtemplates });
          });
      }
      const subtemplates = item.subtemplates === undefined || item.subtemplates === null ? [] : steps(item.subtemplates, [...at, 'subtemplates'], depth + 1);
      out.push({ ...(template ? { template } : {}), tags, matchers, subtemplates });
    });
    return out;
  };
  const result = steps(raw, ['workflows'], 0);
  if (Array.isArray(raw) && raw.length === 0) ctx.error("'workflows' has no steps", ['workflows']);
  return result;
}
