/** One `http` request block: method/path or raw requests, headers, body, options, its matchers and extractors. */
import type { HttpRequestBlock } from '../types.js';
import { type Ctx, isRecord, type Seg, typeName, pathString } from './context.js';
import { markerUnknownFunctions } from './dsl.js';
import { parseOperatorLists } from './operators.js';
import { parsePayloads, type PayloadParseOptions } from './payloads.js';
import { unknownVariablesIn, warnUnknownVariables } from './unknown-variables.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', 'PURGE', 'DEBUG']);

/** Fields of an http block and how the engine treats them. */
const BLOCK_FIELDS_SUPPORTED = new Set([
  'id',
  'name',
  'method',
  'path',
  'raw',
  'headers',
  'body',
  'redirects',
  'host-redirects',
  'max-redirects',
  'stop-at-first-match',
  'matchers',
  'extractors',
  'matchers-condition',
  'req-condition',
  'cookie-reuse',
  'disable-cookie',
  'read-all',
  'skip-variables-check',
  'disable-path-automerge',
  'max-size',
  'iterate-all',
  'threads',
  'attack',
  'race',
  'race_count',
  'unsafe',
  'payloads',
  'self-contained',
]);

/** Fields that make the block impossible to run faithfully: the block is skipped with a warning. */
const BLOCK_FIELDS_SKIP: Record<string, string> = {
  fuzzing: 'fuzzing rules are not supported',
  'race-count': 'race-condition requests are not supported',
  pipeline: 'HTTP pipelining is not supported',
  'pipeline-concurrent-connections': 'HTTP pipelining is not supported',
  'pipeline-requests-per-connection': 'HTTP pipelining is not supported',
  signature: 'request signatures (e.g. AWS) are not supported',
  'digest-username': 'digest authentication is not supported',
  'digest-password': 'digest authentication is not supported',
  analyzer: 'analyzers are not supported',
  'global-matchers': 'global matchers are not supported',
};

const REQ_CONDITION_RE = /_\d+/;

/** All strings in a value (for interactsh / marker scans). */
function _collectStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) {
    v.forEach((x) => {
      _collectStrings(x, out);
    });
  } else if (isRecord(v)) {
    for (const x of Object.values(v)) _collectStrings(x, out);
  }
  return out;
}

export function parseBlock(
  ctx: Ctx,
  raw: unknown,
  segs: Seg[],
  index: number,
  knownVars: Set<string>,
  templateStopAtFirstMatch: boolean,
  payloadOptions: PayloadParseOptions = {},
): HttpRequestBlock | undefined {
  if (!isRecord(raw)) {
    ctx.error(`request must be a mapping, got ${typeName(raw)}`, segs);
    return undefined;
  }
  const skipReasons: string[] = [];
  for (const key of Object.keys(raw)) {
    if (BLOCK_FIELDS_SKIP[key] !== undefined) {
      const v = raw[key];
      if (v === false || v === null || v === undefined || v === 0) continue;
      skipReasons.push(BLOCK_FIELDS_SKIP[key]);
      ctx.warn(`${BLOCK_FIELDS_SKIP[key]}; this request block is skipped`, [...segs, key], true);
    } else if (!BLOCK_FIELDS_SUPPORTED.has(key)) {
      ctx.warn(`unknown request field '${key}' ignored`, [...segs, key], true);
    }
  }
  if (raw.attack !== undefined && raw.payloads === undefined) ctx.warn("'attack' without 'payloads' is ignored", [...segs, 'attack'], true);
  if (raw.threads !== undefined && raw.payloads === undefined) ctx.warn("'threads' is ignored (requests are sent sequentially)", [...segs, 'threads'], true);
  const iterateAll = ctx.bool(raw, 'iterate-all', segs) ?? false;

  let method = 'GET';
  const methodRaw = ctx.str(raw, 'method', segs);
  if (methodRaw !== undefined) {
    const upper = methodRaw.trim().toUpperCase();
    if (!METHODS.has(upper)) ctx.error(`unsupported HTTP method ${JSON.stringify(methodRaw)}`, [...segs, 'method']);
    else method = upper;
  }
  const paths = ctx.strList(raw, 'path', segs, true) ?? [];
  const rawReqs = ctx.strList(raw, 'raw', segs, true) ?? [];
  if (paths.length === 0 && rawReqs.length === 0) {
    ctx.error("a request needs 'path' or 'raw'", segs);
  }
  if (paths.length && rawReqs.length) ctx.warn("both 'path' and 'raw' given; 'raw' is used", [...segs, 'path'], true);
  rawReqs.forEach((r, i) => {
    const firstLine = r.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('@'));
    if (!firstLine || firstLine.trim().split(/\s+/).length < 2) {
      ctx.error('malformed raw request: the first line must be "METHOD /path HTTP/1.1"', [...segs, 'raw', i]);
    }
  });

  const headers: Record<string, string> = {};
  if (raw.headers !== undefined && raw.headers !== null) {
    if (!isRecord(raw.headers)) ctx.error(`'headers' must be a mapping, got ${typeName(raw.headers)}`, [...segs, 'headers']);
    else {
      for (const [k, v] of Object.entries(raw.headers)) {
        if (v === null || v === undefined) headers[k] = '';
        else if (typeof v === 'object') ctx.error(`header '${k}' must be a string`, [...segs, 'headers', k]);
        else headers[k] = String(v);
      }
    }
  }
  const body = ctx.str(raw, 'body', segs);
  const redirects = ctx.bool(raw, 'redirects', segs) ?? false;
  const hostRedirects = ctx.bool(raw, 'host-redirects', segs) ?? false;
  const maxRedirects = ctx.int(raw, 'max-redirects', segs, 0);
  const stopAtFirstMatch = ctx.bool(raw, 'stop-at-first-match', segs) ?? templateStopAtFirstMatch;
  const matchersCondition = ctx.condition(raw, 'matchers-condition', segs);
  const reqConditionFlag = ctx.bool(raw, 'req-condition', segs) ?? false;
  ctx.bool(raw, 'cookie-reuse', segs);
  const disableCookie = ctx.bool(raw, 'disable-cookie', segs) ?? false;
  const disablePathAutomerge = ctx.bool(raw, 'disable-path-automerge', segs) ?? false;
  const skipVariablesCheck = ctx.bool(raw, 'skip-variables-check', segs) ?? false;
  const maxSize = ctx.int(raw, 'max-size', segs, 1);
  const id = ctx.str(raw, 'id', segs)?.trim() || undefined;
  // nuclei races only with both `race: true` and a positive `race_count`; else the block runs as usual
  const race = ctx.bool(raw, 'race', segs) ?? false;
  const raceCount = ctx.int(raw, 'race_count', segs, 0) ?? 0;
  const unsafe = ctx.bool(raw, 'unsafe', segs) ?? false;
  if (unsafe && rawReqs.length === 0) ctx.warn("'unsafe' applies to 'raw' requests only; ignored", [...segs, 'unsafe'], true);

  const { matchers, extractors } = parseOperatorLists(ctx, raw, segs);
  const payloadSpec = parsePayloads(ctx, raw, segs, [raw.headers, raw.matchers, raw.extractors, raw.body, raw.path, raw.raw], payloadOptions);
  if (payloadSpec.skip) skipReasons.push(payloadSpec.skip);
  const payloadNames = new Set(payloadSpec.payloads?.sets.map((s) => s.name));

  // `{{interactsh-url}}` is an OAST URL given at run time (engine/oast.ts), or the template is skipped without OAST
  const requestTexts = [...paths, ...rawReqs, ...Object.values(headers), body ?? ''];
  // '§' payload markers
  if (requestTexts.some((s) => /§[^§\s]+§/.test(s))) {
    skipReasons.push('payload markers (§name§) are not supported');
    ctx.warn('payload markers (§name§) are not supported; this request block is skipped', segs);
  }
  // helper functions used in the request
  const unknownFns = new Set<string>();
  for (const text of requestTexts) for (const f of markerUnknownFunctions(text)) unknownFns.add(f);
  if (unknownFns.size) {
    const reason = `unknown helper function${unknownFns.size > 1 ? 's' : ''} ${[...unknownFns].join(', ')}`;
    skipReasons.push(reason);
    ctx.warn(`${reason} used in the request; this request block is skipped`, segs);
  }
  // variables nobody provides: nuclei would refuse to send such a request
  const extractorNames = new Set(extractors.filter((e) => e.name).map((e) => e.name!));
  const unknownVars = unknownVariablesIn(requestTexts, (v) => knownVars.has(v) || extractorNames.has(v) || payloadNames.has(v));
  if (!skipReasons.length) warnUnknownVariables(ctx, unknownVars, segs, 'http');

  const reqCondition =
    reqConditionFlag ||
    matchers.some((m) => m.dsl.some((d) => REQ_CONDITION_RE.test(d.source)) || REQ_CONDITION_RE.test(m.part)) ||
    extractors.some((e) => e.dsl.some((d) => REQ_CONDITION_RE.test(d.source)) || REQ_CONDITION_RE.test(e.part));

  return {
    path: pathString(segs),
    index,
    id,
    ...(iterateAll ? { iterateAll } : {}),
    method,
    paths: rawReqs.length ? [] : paths,
    raw: rawReqs,
    headers,
    body,
    redirects: redirects || hostRedirects,
    hostRedirects,
    maxRedirects: maxRedirects ?? 10,
    stopAtFirstMatch,
    matchersCondition,
    matchers,
    extractors,
    reqCondition,
    disableCookie,
    disablePathAutomerge,
    skipVariablesCheck,
    maxSize,
    ...(race && raceCount > 0 ? { race: { count: raceCount } } : {}),
    ...(unsafe && rawReqs.length ? { unsafe: true } : {}),
    ...(payloadSpec.payloads ? { payloads: payloadSpec.payloads } : {}),
    skip: skipReasons.length ? [...new Set(skipReasons)].join('; ') : undefined,
    ...(ctx.bool(raw, 'self-contained', segs) ? { selfContained: true } : {}),
  };
}
