/**
 * Version comparison with the semantics of hashicorp/go-version, which nuclei's `compare_versions()` uses:
 * `compare_versions(version, constraint...)`, constraints like `'< 2.4.50'`, `'>= 1.0, < 1.4'`, `'~> 1.2'`.
 */

export interface ParsedVersion {
  segments: number[];
  /** Number of segments written in the original string (go-version's `si`). */
  written: number;
  prerelease: string;
  metadata: string;
  original: string;
}

const VERSION_RE =
  /^v?([0-9]+(?:\.[0-9]+)*?)(-([0-9]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)|(-?([A-Za-z\-~]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)))?(?:\+([0-9A-Za-z\-~]+(?:\.[0-9A-Za-z\-~]+)*))?$/;

export function parseVersion(input: string): ParsedVersion | undefined {
  const text = input.trim();
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  const parts = m[1].split('.');
  const segments: number[] = [];
  for (const p of parts) {
    const n = Number.parseInt(p, 10);
    if (!Number.isFinite(n)) return undefined;
    segments.push(n);
  }
  const written = segments.length;
  while (segments.length < 3) segments.push(0);
  const prerelease = m[3] ?? m[5] ?? '';
  return { segments, written, prerelease, metadata: m[6] ?? '', original: text };
}

function comparePrereleasePart(a: string, b: string): number {
  if (a === b) return 0;
  const an = /^[0-9]+$/.test(a);
  const bn = /^[0-9]+$/.test(b);
  if (an && bn) {
    const x = Number(a);
    const y = Number(b);
    return x === y ? 0 : x < y ? -1 : 1;
  }
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : 1;
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1; // a release is greater than any pre-release
  if (b === '') return -1;
  const ap = a.split('.');
  const bp = b.split('.');
  const n = Math.max(ap.length, bp.length);
  for (let i = 0; i < n; i++) {
    const x = ap[i];
    const y = bp[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const c = comparePrereleasePart(x, y);
    if (c !== 0) return c;
  }
  return 0;
}

/** -1, 0 or 1 like go-version's Compare (metadata ignored). */
export function compareParsed(a: ParsedVersion, b: ParsedVersion): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] ?? 0;
    const y = b.segments[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return comparePrerelease(a.prerelease, b.prerelease);
}

type Op = '=' | '!=' | '>' | '<' | '>=' | '<=' | '~>';

function prereleaseCheck(v: ParsedVersion, c: ParsedVersion): boolean {
  const vPre = v.prerelease !== '';
  const cPre = c.prerelease !== '';
  if (cPre && vPre) {
    // a pre-release constraint only matches pre-releases of the same base version
    const n = Math.max(v.segments.length, c.segments.length);
    for (let i = 0; i < n; i++) if ((v.segments[i] ?? 0) !== (c.segments[i] ?? 0)) return false;
    return true;
  }
  if (!cPre && vPre) return false;
  return true;
}

function checkOne(v: ParsedVersion, op: Op, c: ParsedVersion): boolean {
  const cmp = compareParsed(v, c);
  switch (op) {
    case '=':
      return cmp === 0;
    case '!=':
      return cmp !== 0;
    case '>':
      return prereleaseCheck(v, c) && cmp > 0;
    case '<':
      return prereleaseCheck(v, c) && cmp < 0;
    case '>=':
      return prereleaseCheck(v, c) && cmp >= 0;
    case '<=':
      return prereleaseCheck(v, c) && cmp <= 0;
    case '~>': {
      if (!prereleaseCheck(v, c) || (c.prerelease !== '' && v.prerelease === '')) return false;
      if (cmp < 0) return false;
      const cs = c.written;
      // all segments but the last written one must be equal
      for (let i = 0; i < cs - 1; i++) if ((v.segments[i] ?? 0) !== (c.segments[i] ?? 0)) return false;
      return true;
    }
  }
}

const CONSTRAINT_RE = /^\s*(=|!=|>=|<=|>|<|~>)?\s*(\S+)\s*$/;

export class VersionError extends Error {}

/** go-version `NewConstraint(strings.Join(constraints, ","))` + `Check(version)`. Throws VersionError on bad input. */
export function compareVersions(version: string, ...constraints: string[]): boolean {
  const v = parseVersion(version);
  if (!v) throw new VersionError(`Malformed version: ${version}`);
  const all = constraints.join(',').split(',');
  for (const raw of all) {
    const m = CONSTRAINT_RE.exec(raw);
    if (!m) throw new VersionError(`Malformed constraint: ${raw}`);
    const op = (m[1] ?? '=') as Op;
    const c = parseVersion(m[2]);
    if (!c) throw new VersionError(`Malformed constraint: ${raw}`);
    if (!checkOne(v, op, c)) return false;
  }
  return true;
}
