/** Encoding helpers: base64, compression, URL, hex, HTML and JSON. */
import zlib from 'node:zlib';
import { encodeString } from '../../bytes.js';
import { goJson } from '../../jq.js';
import { DslEvalError, type DslValue } from '../ast.js';
import { bytes, def, fromBytes, S } from './registry.js';

const MAX_DECOMPRESSED = 10 * 1024 * 1024;

function strictBase64Decode(s: string): Buffer {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) {
    throw new DslEvalError('illegal base64 data');
  }
  return Buffer.from(clean, 'base64');
}

function goQueryEscape(v: DslValue): string {
  let out = '';
  for (const b of bytes(v)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (b === 0x20) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function goQueryUnescape(s: string): string {
  const out: number[] = [];
  const src = encodeString(s);
  for (let i = 0; i < src.length; i++) {
    const b = src[i];
    if (b === 0x25) {
      const hex = String.fromCharCode(src[i + 1] ?? 0, src[i + 2] ?? 0);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new DslEvalError(`invalid URL escape "%${hex}"`);
      out.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (b === 0x2b) out.push(0x20);
    else out.push(b);
  }
  return fromBytes(Uint8Array.from(out));
}

const HTML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'", '#34': '"' };

function htmlUnescape(s: string): string {
  return s.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);/g, (whole, ent: string) => {
    if (ent[0] === '#') {
      const cp = ent[1] === 'x' || ent[1] === 'X' ? Number.parseInt(ent.slice(2), 16) : Number.parseInt(ent.slice(1), 10);
      if (Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff) return String.fromCodePoint(cp);
      return whole;
    }
    return HTML_ENTITIES[ent] ?? whole;
  });
}

function zlibOp(fn: (b: Buffer, o: zlib.ZlibOptions) => Buffer, v: DslValue, decompress: boolean): string {
  try {
    return fromBytes(fn(bytes(v), decompress ? { maxOutputLength: MAX_DECOMPRESSED } : {}));
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
}

def('base64', 1, 1, ([v]) => bytes(v).toString('base64'));
def('base64_py', 1, 1, ([v]) => {
  // Python's base64.encodebytes: lines of 76 characters, each terminated by "\n"
  const b64 = bytes(v).toString('base64');
  let out = '';
  for (let i = 0; i < b64.length; i += 76) out += `${b64.slice(i, i + 76)}\n`;
  return out;
});
def('base64_decode', 1, 1, ([v]) => fromBytes(strictBase64Decode(S(v))));
def('gzip', 1, 1, ([v]) => zlibOp(zlib.gzipSync, v, false));
def('gzip_decode', 1, 1, ([v]) => zlibOp(zlib.gunzipSync, v, true));
def('zlib', 1, 1, ([v]) => zlibOp(zlib.deflateSync, v, false));
def('zlib_decode', 1, 1, ([v]) => zlibOp(zlib.inflateSync, v, true));
def('deflate', 1, 1, ([v]) => zlibOp(zlib.deflateRawSync, v, false));
def('inflate', 1, 1, ([v]) => zlibOp(zlib.inflateRawSync, v, true));
def('url_encode', 1, 1, ([v]) => goQueryEscape(v));
def('url_decode', 1, 1, ([v]) => goQueryUnescape(S(v)));
def('hex_encode', 1, 1, ([v]) => bytes(v).toString('hex'));
def('hex_decode', 1, 1, ([v]) => {
  const s = S(v);
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new DslEvalError('invalid hex string');
  return fromBytes(Buffer.from(s, 'hex'));
});
def('html_escape', 1, 1, ([v]) => S(v).replace(/[&'<>"]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;' })[c]!));
def('html_unescape', 1, 1, ([v]) => htmlUnescape(S(v)));
def('json_minify', 1, 1, ([v]) => {
  try {
    return goJson(JSON.parse(S(v)));
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
});
def('json_prettify', 1, 1, ([v]) => {
  try {
    return JSON.stringify(JSON.parse(S(v)), null, 4);
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
});
