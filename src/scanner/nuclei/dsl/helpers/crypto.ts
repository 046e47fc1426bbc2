/** Encryption and token helpers: aes_cbc, aes_gcm, generate_jwt (all through node:crypto). */
import { type CipherGCMTypes, createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { encodeString } from '../../bytes.js';
import { goJson, type Json } from '../../jq.js';
import { DslEvalError, type DslValue } from '../ast.js';
import { bytes, def, fromBytes } from './registry.js';

/** nuclei type-asserts these arguments to strings; numbers or lists are an error, not a conversion. */
function str(v: DslValue, fname: string, what: string): string {
  if (typeof v !== 'string') throw new DslEvalError(`${fname}: ${what} must be a string`);
  return v;
}

function aesName<M extends 'cbc' | 'gcm'>(key: Buffer, mode: M): `aes-${number}-${M}` {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) throw new DslEvalError(`crypto/aes: invalid key size ${key.length}`);
  return `aes-${key.length * 8}-${mode}` as `aes-${number}-${M}`;
}

/** aes_cbc(plaintext, key, iv): PKCS#7-padded AES-CBC ciphertext (raw bytes), as nuclei. */
def('aes_cbc', 3, 3, ([plaintext, key, iv]) => {
  const k = bytes(str(key, 'aes_cbc', 'key'));
  const i = bytes(str(iv, 'aes_cbc', 'iv'));
  const cipherName = aesName(k, 'cbc');
  if (i.length !== 16) throw new DslEvalError('cipher.NewCBCEncrypter: IV length must equal block size');
  const c = createCipheriv(cipherName, k, i);
  return fromBytes(Buffer.concat([c.update(bytes(str(plaintext, 'aes_cbc', 'plaintext'))), c.final()]));
});

/** aes_gcm(key, plaintext): random 12-byte nonce, then the ciphertext, then the 16-byte tag (Go's gcm.Seal(nonce, nonce, ...)). */
def('aes_gcm', 2, 2, ([key, plaintext]) => {
  const k = bytes(str(key, 'aes_gcm', 'key'));
  const nonce = randomBytes(12);
  const c = createCipheriv(aesName(k, 'gcm') as CipherGCMTypes, k, nonce);
  const sealed = Buffer.concat([c.update(bytes(str(plaintext, 'aes_gcm', 'plaintext'))), c.final()]);
  return fromBytes(Buffer.concat([nonce, sealed, c.getAuthTag()]));
});

/* ------------------------------------------------------------------------------------------------------------ */
/* generate_jwt(json, algorithm, optionalSecret, optionalMaxAgeUnix) — nuclei signs with kataras/jwt             */
/* ------------------------------------------------------------------------------------------------------------ */

const HMAC: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
/** Known to kataras/jwt, but they need a parsed private key; nuclei passes the secret as bytes, so they fail. */
const KEYED = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EDDSA']);
/** Longest duration Go's time.Duration holds (about 292 years), which time.Until saturates to. */
const MAX_DURATION_SECONDS = 9_223_372_036;

const b64url = (b: Buffer) => b.toString('base64url');

/** Go's json.Marshal also escapes <, >, & and U+2028/9; they can only occur inside strings of goJson's output. */
function goMarshal(v: Json): string {
  return goJson(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function maxAgeSeconds(v: DslValue): number {
  if (typeof v === 'string') {
    if (!/^[+-]?[0-9]+$/.test(v)) throw new DslEvalError('invalid argument type');
    return Number(v);
  }
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  throw new DslEvalError('invalid argument type');
}

/**
 * kataras/jwt's MaxAge option: when the expiry is more than one second away it sets iat (now) and exp, and the
 * claims are merged by splicing their JSON texts: `{claims}` minus "}" + "," + `{"iat":..,"exp":..}` minus "{".
 * An expiry in the past leaves the standard claims empty, and the splice then gives `{claims,}` — reproduced.
 */
function withMaxAge(claimsJson: string, expUnix: number): string {
  const now = Math.floor(Date.now() / 1000);
  const maxAge = Math.min(expUnix - now, MAX_DURATION_SECONDS);
  const standard = maxAge <= 1 ? '{}' : `{"iat":${now},"exp":${now + maxAge}}`;
  return `${claimsJson.slice(0, -1)},${standard.slice(1)}`;
}

def('generate_jwt', 2, 4, (args) => {
  const json = str(args[0], 'generate_jwt', 'the JSON claims');
  const alg = str(args[1], 'generate_jwt', 'the algorithm');
  let claims: Json;
  try {
    claims = JSON.parse(fromBytes(encodeString(json))) as Json;
  } catch (err) {
    throw new DslEvalError(`generate_jwt: ${(err as Error).message}`);
  }
  if (claims !== null && (typeof claims !== 'object' || Array.isArray(claims))) {
    throw new DslEvalError(`json: cannot unmarshal ${Array.isArray(claims) ? 'array' : typeof claims} into Go value of type jwt.Map`);
  }
  const upper = alg.toUpperCase();
  // "none" in any case keeps its spelling in the header; an empty algorithm is kataras/jwt's NONE
  const isNone = alg.trim().toLowerCase() === 'none';
  const name = isNone ? alg : upper === '' ? 'NONE' : upper === 'EDDSA' ? 'EdDSA' : upper;
  if (!isNone && upper !== '' && !HMAC[upper] && !KEYED.has(upper)) throw new DslEvalError(`invalid algorithm: ${upper}`);
  if (KEYED.has(upper)) throw new DslEvalError('encodeToken: signature: jwt: invalid key');
  const secret = args.length > 2 ? bytes(str(args[2], 'generate_jwt', 'the signature key')) : Buffer.alloc(0);
  let payload = goMarshal(claims);
  if (args.length > 3) payload = withMaxAge(payload, maxAgeSeconds(args[3]));
  const signingInput = `${b64url(encodeString(`{"alg":"${name}","typ":"JWT"}`))}.${b64url(encodeString(payload))}`;
  const signature = HMAC[upper] ? b64url(createHmac(HMAC[upper], secret).update(signingInput).digest()) : '';
  return `${signingInput}.${signature}`;
});
