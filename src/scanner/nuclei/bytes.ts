/**
 * Byte-string helpers.
 *
 * nuclei (Go) treats response bodies and DSL values as byte strings; JavaScript strings are UTF-16. To keep
 * both readable text and binary data exact we use Python's "surrogateescape" convention: valid UTF-8 decodes
 * normally, every byte that is not part of a valid UTF-8 sequence becomes the lone surrogate U+DC80+byte
 * (bytes < 0x80 are always valid). `encodeString` reverses it, so decode→encode round-trips any byte sequence.
 * Hashes (md5, mmh3, ...), base64 and `len()` work on the bytes, like nuclei.
 */
import { Buffer, isUtf8 } from 'node:buffer';

const ESCAPE_BASE = 0xdc00;

export function decodeBytes(bytes: Uint8Array): string {
  if (bytes.length === 0) return '';
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let out = '';
  let chunk: number[] = [];
  const flush = () => {
    if (chunk.length) {
      out += String.fromCharCode(...chunk);
      chunk = [];
    }
  };
  const push = (cu: number) => {
    chunk.push(cu);
    if (chunk.length >= 4096) flush();
  };
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b0 = bytes[i];
    if (b0 < 0x80) {
      push(b0);
      i++;
      continue;
    }
    let need = 0;
    let cp = 0;
    let min = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      need = 1;
      cp = b0 & 0x1f;
      min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      cp = b0 & 0x0f;
      min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      cp = b0 & 0x07;
      min = 0x10000;
    }
    let ok = need > 0 && i + need < n;
    if (ok) {
      for (let k = 1; k <= need; k++) {
        const b = bytes[i + k];
        if (b === undefined || (b & 0xc0) !== 0x80) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (b & 0x3f);
      }
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (!ok) {
      push(ESCAPE_BASE + b0);
      i++;
      continue;
    }
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      push(0xd800 + (v >> 10));
      push(0xdc00 + (v & 0x3ff));
    } else {
      push(cp);
    }
    i += need + 1;
  }
  flush();
  return out;
}

/** Alias used by HttpSender implementations. */
export const decodeBody = decodeBytes;

function hasSurrogates(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}

export function encodeString(s: string): Buffer {
  if (!hasSurrogates(s)) return Buffer.from(s, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
        i++;
        continue;
      }
      out.push(0xef, 0xbf, 0xbd);
      continue;
    }
    if (c >= 0xdc80 && c <= 0xdcff) {
      out.push(c - ESCAPE_BASE);
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      out.push(0xef, 0xbf, 0xbd);
      continue;
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(out);
}

/** Length in bytes (Go's `len(string)`). */
export function byteLength(s: string): number {
  if (!hasSurrogates(s)) return Buffer.byteLength(s, 'utf8');
  return encodeString(s).length;
}

/** Cut a string to at most `max` UTF-16 code units, noting the cut. */
export function excerpt(s: string, max: number): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}\n…[truncated ${s.length - max} characters]`;
}
