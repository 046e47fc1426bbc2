/**
 * What the `dns:` and `ssl:` block parsers share: matchers/extractors, the block fields that make a block
 * unrunnable (payloads...), and the check that every `{{variable}}` a block sends is provided by someone.
 */
import type { Extractor, Matcher } from '../types.js';
import { type Ctx, isRecord, type Seg, typeName } from './context.js';
import { markerUnknownFunctions } from './dsl.js';
import { parseOperatorLists as parseOperators } from './operators.js';
import { unknownVariablesIn, warnUnknownVariables } from './unknown-variables.js';

/** Block fields every protocol understands the same way (nuclei's operators.Operators plus `id`). */
export const OPERATOR_FIELDS = ['id', 'matchers', 'extractors', 'matchers-condition', 'stop-at-first-match'];

/** Fields that make a dns/ssl block impossible to run faithfully: the block is skipped with a warning. */
export const HOST_BLOCK_SKIP: Record<string, string> = {
  payloads: 'payloads / attack modes are not supported',
};

export function parseOperatorLists(ctx: Ctx, raw: Record<string, unknown>, segs: Seg[]): { matchers: Matcher[]; extractors: Extractor[] } {
  return parseOperators(ctx, raw, segs, { wordlessWordMatchers: true });
}

/** Warns on unknown fields and on fields that skip the block; returns the skip reasons. */
export function checkBlockFields(ctx: Ctx, raw: Record<string, unknown>, segs: Seg[], supported: ReadonlySet<string>): string[] {
  const reasons: string[] = [];
  for (const key of Object.keys(raw)) {
    const skip = supported.has(key) ? undefined : HOST_BLOCK_SKIP[key];
    if (skip !== undefined) {
      const v = raw[key];
      if (v === false || v === null || v === undefined || v === 0) continue;
      reasons.push(skip);
      ctx.warn(`${skip}; this request block is skipped`, [...segs, key], true);
    } else if (key === 'attack' && !supported.has(key)) {
      if (raw.payloads === undefined) ctx.warn("'attack' without 'payloads' is ignored", [...segs, 'attack'], true);
    } else if (key === 'threads') {
      if (raw.payloads === undefined) ctx.warn("'threads' is ignored", [...segs, 'threads'], true);
    } else if (!supported.has(key)) {
      ctx.warn(`unknown request field '${key}' ignored`, [...segs, key], true);
    }
  }
  return reasons;
}

/**
 * Markers in what the block sends: unknown helpers and variables nobody provides make the block
 * unrunnable (nuclei would not send it either). `provided` are the protocol's input variables plus template
 * variables, constants and extractor names.
 */
export function checkSentText(ctx: Ctx, skipped: boolean, texts: string[], segs: Seg[], provided: ReadonlySet<string>, protocol: string): string[] {
  const reasons: string[] = [];
  const unknownFns = new Set<string>();
  for (const text of texts) for (const f of markerUnknownFunctions(text)) unknownFns.add(f);
  if (unknownFns.size) {
    const reason = `unknown helper function${unknownFns.size > 1 ? 's' : ''} ${[...unknownFns].join(', ')}`;
    reasons.push(reason);
    ctx.warn(`${reason} used in the request; this request block is skipped`, segs);
  }
  // a block skipped anyway (payloads provide such variables) needs no second warning
  if (!reasons.length && !skipped)
    warnUnknownVariables(
      ctx,
      unknownVariablesIn(texts, (v) => provided.has(v)),
      segs,
      protocol,
    );
  return reasons;
}

/** A block list (`dns:` / `ssl:`): each entry goes through `parseOne`. */
export function parseBlockList<T>(
  ctx: Ctx,
  key: string,
  list: unknown,
  parseOne: (raw: Record<string, unknown>, segs: Seg[], index: number) => T | undefined,
): T[] {
  const out: T[] = [];
  if (!Array.isArray(list)) {
    ctx.error(`'${key}' must be a list of requests, got ${typeName(list)}`, [key]);
    return out;
  }
  if (list.length === 0) ctx.error(`'${key}' has no requests`, [key]);
  // a block without operators can feed later blocks; only a list where no block has any can never find anything
  const operators = (b: unknown) =>
    isRecord(b) && ((Array.isArray(b.matchers) && b.matchers.length > 0) || (Array.isArray(b.extractors) && b.extractors.length > 0));
  if (list.length > 0 && !list.some(operators)) ctx.warn('no request has matchers or extractors; this template can never produce a finding', [key]);
  list.forEach((raw, i) => {
    if (!isRecord(raw)) {
      ctx.error(`request must be a mapping, got ${typeName(raw)}`, [key, i]);
      return;
    }
    const block = parseOne(raw, [key, i], i);
    if (block) out.push(block);
  });
  return out;
}

/** Names extracted by any block of a list (they can feed later blocks). */
export function extractorNames(list: unknown): string[] {
  const names: string[] = [];
  if (!Array.isArray(list)) return names;
  for (const b of list) {
    if (isRecord(b) && Array.isArray(b.extractors)) for (const e of b.extractors) if (isRecord(e) && typeof e.name === 'string') names.push(e.name);
  }
  return names;
}
