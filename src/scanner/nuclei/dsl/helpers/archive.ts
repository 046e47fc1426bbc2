/** Binary helpers: zip (archive of name/content pairs) and unpack (one value out of packed bytes). */
import { Zip, ZipDeflate } from 'fflate';
import { DslEvalError } from '../ast.js';
import { bytes, def, fromBytes, INF } from './registry.js';

/** Go's archive/zip writes a zero DOS time; fflate needs 1980 or later, so entries carry its first day. */
const ZIP_MTIME = new Date(1980, 0, 1);

/** zip(name, content, name, content, ...): a deflated ZIP archive as raw bytes, entries in argument order. */
def('zip', 2, INF, (args) => {
  if (args.length % 2 !== 0) throw new DslEvalError('zip function requires pairs of file entry and content');
  const parts: Uint8Array[] = [];
  let failure: Error | null = null;
  // fflate's synchronous streaming writer (not zipSync) so that repeated names stay separate entries, as in Go
  const archive = new Zip((err, chunk) => {
    if (err) failure = err;
    else parts.push(chunk);
  });
  for (let i = 0; i < args.length; i += 2) {
    const [name, content] = [args[i], args[i + 1]];
    if (typeof name !== 'string') throw new DslEvalError('file entry must be a string');
    if (typeof content !== 'string') throw new DslEvalError('content must be a string');
    const entry = new ZipDeflate(name, { level: 6 });
    entry.mtime = ZIP_MTIME;
    archive.add(entry);
    entry.push(bytes(content), true);
  }
  archive.end();
  if (failure) throw new DslEvalError(`zip: ${(failure as Error).message}`);
  return fromBytes(Buffer.concat(parts));
});

/**
 * unpack(format, data): the first value of Python-struct-like packed data, through projectdiscovery/gostruct's rules:
 * every format character is one token (`<` little-endian, the default; `>` big-endian; `?` bool; `b` int8; `B` uint8;
 * `h H` 16-bit; `i I l L` 32-bit; `q Q` 64-bit; `f` float32; `d` float64; `s` an empty string). The upper-case
 * integer codes are read signed, as gostruct does. Data shorter than the whole format is an error.
 * 64-bit integers beyond 2^53 lose precision (DSL numbers are doubles); float32 values are given as their shortest
 * decimal form (1.1, not 1.100000023841858), as Go prints a float32.
 */
const SIZES: Record<string, number> = { '<': 0, '>': 0, '?': 1, b: 1, B: 1, h: 2, H: 2, i: 4, I: 4, l: 4, L: 4, q: 8, Q: 8, f: 4, d: 8, s: 0 };

function shortestFloat32(f: number): number {
  if (!Number.isFinite(f)) return f;
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(f.toPrecision(p));
    if (Math.fround(candidate) === f) return candidate;
  }
  return f;
}

def('unpack', 2, 2, ([format, data]) => {
  if (typeof format !== 'string') throw new DslEvalError('invalid format');
  if (typeof data !== 'string') throw new DslEvalError('invalid data');
  const tokens = [...format];
  let size = 0;
  for (const t of tokens) {
    if (!Object.hasOwn(SIZES, t)) throw new DslEvalError(`Unexpected format token: '${t}'`);
    size += SIZES[t];
  }
  const msg = bytes(data);
  if (size > msg.length) throw new DslEvalError('expected size is bigger than actual size of message');
  let little = true;
  for (const t of tokens) {
    if (t === '<' || t === '>') {
      little = t === '<';
      continue;
    }
    switch (t) {
      case '?':
        return msg.readInt8(0) > 0;
      case 'b':
        return msg.readInt8(0);
      case 'B':
        return msg.readUInt8(0);
      case 'h':
      case 'H':
        return little ? msg.readInt16LE(0) : msg.readInt16BE(0);
      case 'i':
      case 'I':
      case 'l':
      case 'L':
        return little ? msg.readInt32LE(0) : msg.readInt32BE(0);
      case 'q':
      case 'Q':
        return Number(little ? msg.readBigInt64LE(0) : msg.readBigInt64BE(0));
      case 'f':
        return shortestFloat32(little ? msg.readFloatLE(0) : msg.readFloatBE(0));
      case 'd':
        return little ? msg.readDoubleLE(0) : msg.readDoubleBE(0);
      default:
        return '';
    }
  }
  throw new DslEvalError('no result');
});
