/**
 * Requests of `self-contained` blocks (nuclei's makeSelfContainedRequest): their URL comes from the block, never
 * from the target. A `path` entry is the whole URL, rendered without target variables (`{{BaseURL}}` stays
 * unresolved: the request is not sent). A raw request names its host in the request line
 * (`GET https://api.example.com/x HTTP/1.1`) or, with a relative path, in its `Host:` header (then over http, as
 * nuclei's raw.ParseRawRequest); the rest of the raw request sees the target variables of that URL's origin.
 * Those two parts are rendered on their own first, so an unresolved variable there is named in the reason.
 */
import { renderMarkers, type DslScope } from '../dsl/index.js';
import { rawRequestLine } from '../parse/self-contained.js';
import { TARGET_VARIABLES } from '../parse/template.js';
import type { HttpRequestBlock } from '../types.js';
import { splitUrl } from '../url-util.js';
import { type BuildOutcome, buildPathRequest, buildRawRequest } from './requests.js';
import { type TargetInfo, parseTarget } from './target.js';

/** A block's request for one `path` / `raw` entry, with the target (none in a self-contained run) or without. */
export function buildBlockRequest(
  block: HttpRequestBlock,
  entry: string,
  target: TargetInfo | undefined,
  layers: DslScope,
  userAgent: string,
  cookies: Map<string, string>,
): BuildOutcome {
  const isRaw = block.raw.length > 0;
  if (!block.selfContained) {
    if (!target) return { ok: false, reason: 'the request needs a target and a self-contained run has none', unresolved: true };
    return isRaw ? buildRawRequest(block, entry, target, layers, userAgent, cookies) : buildPathRequest(block, entry, target, layers, userAgent, cookies);
  }
  if (!isRaw) return withNoTargetHint(buildPathRequest(block, entry, undefined, layers, userAgent, cookies));
  const origin = rawOrigin(block, entry, layers);
  if (!origin.ok) return origin;
  return buildRawRequest(block, entry, origin.target, layers, userAgent, cookies);
}

function withNoTargetHint(outcome: BuildOutcome): BuildOutcome {
  if (outcome.ok || !outcome.unresolved) return outcome;
  const usesTarget = TARGET_VARIABLES.some((name) => outcome.reason.includes(`{{${name}}}`));
  return usesTarget ? { ...outcome, reason: `${outcome.reason} (a self-contained request has no target)` } : outcome;
}

function renderPart(
  text: string,
  layers: DslScope,
  what: string,
  skipCheck: boolean,
): { ok: true; text: string } | { ok: false; reason: string; unresolved: true } {
  const r = renderMarkers(text, layers);
  if (!skipCheck && (r.unresolved.length || r.errors.length)) {
    const detail = r.unresolved.length ? `unresolved ${r.unresolved.map((v) => `{{${v}}}`).join(', ')}` : r.errors[0];
    return withNoTargetHint({ ok: false, reason: `${detail} in ${what}`, unresolved: true }) as { ok: false; reason: string; unresolved: true };
  }
  return { ok: true, text: r.text.trim() };
}

/** Where a self-contained raw request goes: its request line's URL, else `http://` + its Host header. */
function rawOrigin(
  block: HttpRequestBlock,
  entry: string,
  layers: DslScope,
): { ok: true; target: TargetInfo } | { ok: false; reason: string; unresolved?: boolean } {
  const line = rawRequestLine(entry).trim().split(/\s+/);
  if (line.length < 3) return { ok: false, reason: 'a self-contained raw request needs a path or URL in its request line' };
  const where = renderPart(line.slice(1, -1).join(' '), layers, 'the request line', block.skipVariablesCheck);
  if (!where.ok) return where;
  let origin: string;
  if (/^https?:\/\//i.test(where.text)) {
    const split = splitUrl(where.text);
    if (!split) return { ok: false, reason: `invalid URL ${JSON.stringify(where.text)} in the request line` };
    origin = `${split.scheme}://${split.authority}`;
  } else {
    const lines = entry.split('\n');
    const start = lines.findIndex((l) => l.trim() !== '' && !l.trim().startsWith('@'));
    const end = lines.findIndex((l, i) => i > start && l.trim() === '');
    const hostLine = lines.slice(start + 1, end === -1 ? undefined : end).find((l) => /^\s*host\s*:/i.test(l));
    if (!hostLine) return { ok: false, reason: 'a self-contained raw request with a relative path needs a Host header' };
    const host = renderPart(hostLine.slice(hostLine.indexOf(':') + 1), layers, 'the Host header', block.skipVariablesCheck);
    if (!host.ok) return host;
    origin = `http://${host.text}`;
  }
  try {
    return { ok: true, target: parseTarget(origin) };
  } catch {
    return { ok: false, reason: `the request's URL ${JSON.stringify(origin)} is not a valid http(s) URL` };
  }
}
