/** Hash helpers: digests, HMAC, MurmurHash3 and xor. */
import { createHash, createHmac } from 'node:crypto';
import { mmh3Signed } from '../../mmh3.js';
import { DslEvalError, type DslValue } from '../ast.js';
import { bytes, def, fromBytes, INF, S } from './registry.js';

function hash(algo: string, v: DslValue): string {
  return createHash(algo).update(bytes(v)).digest('hex');
}

def('hmac', 3, 3, ([algo, data, key]) => {
  const a = S(algo).toLowerCase().replace('-', '');
  if (a !== 'sha1' && a !== 'sha256' && a !== 'sha512') throw new DslEvalError(`unsupported hash algorithm: '${S(algo)}'`);
  return createHmac(a, bytes(key)).update(bytes(data)).digest('hex');
});
def('md5', 1, 1, ([v]) => hash('md5', v));
def('sha1', 1, 1, ([v]) => hash('sha1', v));
def('sha256', 1, 1, ([v]) => hash('sha256', v));
def('sha512', 1, 1, ([v]) => hash('sha512', v));
def('mmh3', 1, 1, ([v]) => String(mmh3Signed(bytes(v))));
def('xor', 2, INF, (args) => {
  const bufs = args.map(bytes);
  const n = bufs[0].length;
  if (bufs.some((b) => b.length !== n)) throw new DslEvalError('all arguments must have the same length');
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) for (const b of bufs) out[i] ^= b[i];
  return fromBytes(out);
});
