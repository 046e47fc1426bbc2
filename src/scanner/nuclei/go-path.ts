/**
 * The request path as nuclei puts it on the wire: its URLs go through Go's net/url (via projectdiscovery's
 * urlutil), and Go's client writes `URL.EscapedPath()`. That gives:
 *  - a path Go can parse keeps its escapes as written (`/%2e%2e/`, `/%73%6f%6d%65%0A`), unless it holds a byte
 *    a path may not carry as is (`<`, `"`, `{`, space...): then the decoded path is escaped again (`/a b` → `/a%20b`);
 *  - a path Go cannot parse (an invalid escape such as `%zz` or `%u002e`, or a control byte) is taken literally by
 *    urlutil and escaped whole: every `%` becomes `%25` (`/xyz/%u2s/%invalid` → `/xyz/%25u2s/%25invalid`, as
 *    nuclei's own http-paths integration test expects). Only `unsafe: true` requests send such paths as written.
 * Strings follow bytes.ts (U+DC80..U+DCFF stand for raw bytes); the result is ASCII.
 */
import { encodeString } from './bytes.js';

const PATH_SAFE_MARKS = new Set([...'-_.~$&+,/:;=@'].map((c) => c.charCodeAt(0)));
/** Go's validEncoded(s, encodePath) accepts these on top of what needs no escape. */
const VALID_ENCODED_EXTRA = new Set([..."!$&'()*+,;=:@[]"].map((c) => c.charCodeAt(0)));

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Go's shouldEscape(c, encodePath). */
function shouldEscape(c: number): boolean {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return false;
  return !PATH_SAFE_MARKS.has(c);
}

/** Go's escape(s, encodePath) over bytes. */
function escapeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const c of bytes) out += shouldEscape(c) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(c);
  return out;
}

/** Whether Go's url.Parse refuses the path: an invalid `%` escape or a control byte. */
function unparsable(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c < 0x20 || c === 0x7f) return true;
    if (c === 0x25 && !(i + 2 < bytes.length && isHex(bytes[i + 1]) && isHex(bytes[i + 2]))) return true;
  }
  return false;
}

function unescapeBytes(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25) {
      out.push(Number.parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16));
      i += 2;
    } else out.push(bytes[i]);
  }
  return Uint8Array.from(out);
}

function validEncoded(bytes: Uint8Array): boolean {
  for (const c of bytes) {
    if (VALID_ENCODED_EXTRA.has(c) || c === 0x25) continue;
    if (shouldEscape(c)) return false;
  }
  return true;
}

/** The path (no query) as Go's client writes it for a URL nuclei built from this path. */
export function goEscapedPath(path: string): string {
  const raw = encodeString(path);
  if (unparsable(raw)) return escapeBytes(raw);
  const written = Buffer.from(raw).toString('latin1');
  const decoded = unescapeBytes(raw);
  if (escapeBytes(decoded) === written) return written;
  return validEncoded(raw) ? written : escapeBytes(decoded);
}
