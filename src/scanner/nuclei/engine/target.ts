import type { DslRecord, DslScope } from '../dsl/index.js';
import { splitUrl, type SplitUrl } from '../url-util.js';

export interface TargetInfo {
  input: string;
  url: SplitUrl;
  /** Path of the input URL as written ('' when none). */
  path: string;
  /** Query string of the input URL without '?'. */
  query: string;
}

export function parseTarget(baseUrl: string): TargetInfo {
  const url = splitUrl(baseUrl);
  if (!url) throw new Error(`invalid target URL ${JSON.stringify(baseUrl)} (expected http(s)://host[:port][/path])`);
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*([^?#]*)(?:\?([^#]*))?/.exec(baseUrl.trim());
  return { input: baseUrl.trim(), url, path: m?.[1] ?? '', query: m?.[2] ?? '' };
}

function goDir(p: string): string {
  if (p === '') return '';
  const idx = p.lastIndexOf('/');
  if (idx === -1) return '';
  const dir = p.slice(0, idx);
  return dir === '' ? '/' : dir;
}

function goBase(p: string): string {
  if (p === '') return '';
  const trimmed = p.replace(/\/+$/, '');
  if (trimmed === '') return '/';
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

function targetVariables(t: TargetInfo, removeTrailingSlash: boolean): Record<string, string> {
  let path = t.path;
  if (removeTrailingSlash) path = path.replace(/\/$/, '');
  const root = `${t.url.scheme}://${t.url.authority}`;
  return {
    BaseURL: `${root}${path}`,
    RootURL: root,
    Hostname: t.url.authority,
    Host: t.url.hostname,
    Port: String(t.url.port),
    Path: goDir(path),
    File: goBase(path),
    Scheme: t.url.scheme,
    Query: t.query ? `?${t.query}` : '',
    Input: t.input,
    FQDN: t.url.hostname,
  };
}

const targetScopeCache = new WeakMap<TargetInfo, { strip: DslRecord; keep: DslRecord }>();

/** The layers over the target's variables; with no target (a self-contained run) the layers alone. */
export function layersWithTarget(layers: DslScope, target: TargetInfo | undefined, strip: boolean): DslScope {
  if (!target) return layers;
  let cached = targetScopeCache.get(target);
  if (!cached) {
    cached = { strip: targetVariables(target, true), keep: targetVariables(target, false) };
    targetScopeCache.set(target, cached);
  }
  const vars = strip ? cached.strip : cached.keep;
  return {
    get(name: string) {
      const v = layers.get(name);
      if (v !== undefined) return v;
      return Object.hasOwn(vars, name) ? vars[name] : undefined;
    },
  };
}
