/**
 * URL splitting without WHATWG normalisation. nuclei (Go's net/url) sends paths such as `/../../etc/passwd`
 * or `/%2e%2e/` verbatim; `new URL()` would resolve the dot segments and defeat such templates.
 */

export interface SplitUrl {
  scheme: 'http' | 'https';
  /** host[:port] as written (without userinfo). */
  authority: string;
  /** Hostname without IPv6 brackets. */
  hostname: string;
  port: number;
  /** Whether the port was written explicitly. */
  explicitPort: boolean;
  /** Path and query, starting with '/', fragment removed. */
  pathAndQuery: string;
}

const URL_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^#]*)/;

export function splitUrl(url: string): SplitUrl | undefined {
  const m = URL_RE.exec(url.trim());
  if (!m) return undefined;
  const scheme = m[1].toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return undefined;
  let authority = m[2];
  const at = authority.lastIndexOf('@');
  if (at !== -1) authority = authority.slice(at + 1);
  if (!authority) return undefined;
  let hostname: string;
  let portText = '';
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    if (end === -1) return undefined;
    hostname = authority.slice(1, end);
    const rest = authority.slice(end + 1);
    if (rest.startsWith(':')) portText = rest.slice(1);
    else if (rest) return undefined;
  } else {
    const colon = authority.lastIndexOf(':');
    if (colon !== -1) {
      hostname = authority.slice(0, colon);
      portText = authority.slice(colon + 1);
    } else hostname = authority;
  }
  if (!hostname || /[\s/\\]/.test(hostname)) return undefined;
  let port = scheme === 'https' ? 443 : 80;
  if (portText) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535 || Number(portText) === 0) return undefined;
    port = Number(portText);
  }
  let pathAndQuery = m[3];
  if (pathAndQuery === '' || pathAndQuery.startsWith('?')) pathAndQuery = `/${pathAndQuery}`;
  return { scheme, authority, hostname, port, explicitPort: portText !== '', pathAndQuery };
}

/** host:port key used to compare origins (lower-case, default ports made explicit). */
export function originKey(u: SplitUrl): string {
  return `${u.scheme}://${u.hostname.toLowerCase()}:${u.port}`;
}

/** Same host name (any port, any scheme): what a template may reach on its target. */
export function sameHost(a: SplitUrl, b: SplitUrl): boolean {
  return a.hostname.toLowerCase() === b.hostname.toLowerCase();
}

/** Characters Node refuses in a request path are percent-encoded; everything else is kept as written. */
export function safeRequestPath(path: string): string {
  let out = '';
  for (const ch of path) {
    const cp = ch.codePointAt(0)!;
    if (cp > 0x20 && cp < 0x7f) out += ch;
    else {
      for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

/** Go's mergePaths as used by nuclei's raw request path automerge. */
export function mergePaths(base: string, rel: string): string {
  const a = base;
  let b = rel;
  if (a.endsWith('/') && b.startsWith('/')) b = b.replace(/^\/+/, '');
  if (a === '') return b;
  if (b === '') return a;
  if (!a.endsWith('/') && !b.startsWith('/')) b = `/${b}`;
  return a + b;
}

/** Go's http.CanonicalHeaderKey: `content-type` → `Content-Type`. */
export function canonicalHeaderKey(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return name;
  return name
    .split('-')
    .map((part) => (part ? part[0].toUpperCase() + part.slice(1).toLowerCase() : part))
    .join('-');
}
