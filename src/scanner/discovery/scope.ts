/**
 * Which host names discovery may explore: names equal to or under the target's domain or one of the
 * workspace's root domains, minus its exclusions (exact names, or `*.suffix` for every name under suffix).
 */
import { normalizeHostName } from '../dns.js';

export interface NameScopeOptions {
  /** Domains whose names are in scope (the target's domain, the workspace's declared root domains). */
  roots: readonly string[];
  /** Exact names and `*.suffix` patterns, already validated (see parseExclusionPattern). */
  exclusions?: readonly string[];
}

export interface NameScope {
  /** Under a root and not excluded. */
  inScope(name: string): boolean;
  excluded(name: string): boolean;
  underRoots(name: string): boolean;
}

/** `name` is `domain` or a name under it. */
export function isSubdomainOrSelf(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}

export function createNameScope(options: NameScopeOptions): NameScope {
  const roots = options.roots.map((root) => normalizeHostName(root));
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const pattern of options.exclusions ?? []) {
    const parsed = parseExclusionPattern(pattern);
    if (parsed.kind === 'exact') exact.add(parsed.name);
    else suffixes.push(parsed.suffix);
  }
  const normal = (name: string): string | null => {
    try {
      return normalizeHostName(name);
    } catch {
      return null;
    }
  };
  const excluded = (name: string) => {
    const host = normal(name);
    if (host === null) return true;
    return exact.has(host) || suffixes.some((suffix) => host.endsWith(`.${suffix}`));
  };
  const underRoots = (name: string) => {
    const host = normal(name);
    return host !== null && roots.some((root) => isSubdomainOrSelf(host, root));
  };
  return { excluded, underRoots, inScope: (name) => underRoots(name) && !excluded(name) };
}

export type ExclusionPattern = { kind: 'exact'; name: string } | { kind: 'suffix'; suffix: string };

/** An exclusion as typed by a user: `host.example.com` or `*.example.com`. Throws TypeError with a reason otherwise. */
export function parseExclusionPattern(input: string): ExclusionPattern {
  const text = input.trim();
  if (text.startsWith('*.')) {
    const suffix = hostNameOrThrow(text.slice(2), input);
    return { kind: 'suffix', suffix };
  }
  if (text.includes('*')) throw new TypeError(`"${input}" is not a valid exclusion: use an exact host name or *.suffix`);
  return { kind: 'exact', name: hostNameOrThrow(text, input) };
}

/** The canonical text of a valid pattern (lower-case, punycode): what is stored. */
export function normalizeExclusionPattern(input: string): string {
  const parsed = parseExclusionPattern(input);
  return parsed.kind === 'exact' ? parsed.name : `*.${parsed.suffix}`;
}

function hostNameOrThrow(text: string, input: string): string {
  let host: string;
  try {
    host = normalizeHostName(text);
  } catch {
    throw new TypeError(`"${input}" is not a valid exclusion: use an exact host name or *.suffix`);
  }
  if (/^[0-9.]+$/.test(host) || host.includes(':')) throw new TypeError(`"${input}" is not a valid exclusion: IP addresses are not host names`);
  if (!host.includes('.')) throw new TypeError(`"${input}" is not a valid exclusion: name a domain with at least two labels`);
  return host;
}
