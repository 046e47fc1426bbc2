import { createDecipheriv, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encodeString, evaluateExpression, scopeOf, type DslRecord } from '../../src/scanner/nuclei/index.js';

const ev = (expr: string, vars: DslRecord = {}) => evaluateExpression(expr, scopeOf(vars));
const raw = (v: unknown) => encodeString(v as string);
const part = (token: string, i: number) => Buffer.from(token.split('.')[i], 'base64url').toString();

describe('aes_cbc(plaintext, key, iv)', () => {
  it('matches the NIST SP 800-38A CBC-AES128 vector, then one PKCS#7 padding block', () => {
    const out = ev(
      "hex_encode(aes_cbc(hex_decode('6bc1bee22e409f96e93d7e117393172a'), hex_decode('2b7e151628aed2a6abf7158809cf4f3c'), hex_decode('000102030405060708090a0b0c0d0e0f')))",
    ) as string;
    expect(out).toHaveLength(64);
    expect(out.slice(0, 32)).toBe('7649abac8119b246cee98e9b12e9197d');
  });

  it('encrypts with 16, 24 and 32-byte keys, as nuclei templates use it (base64 of raw bytes)', () => {
    for (const key of ['k'.repeat(16), 'k'.repeat(24), 'k'.repeat(32)]) {
      const b64 = ev(`base64(aes_cbc('secret payload', '${key}', '0123456789abcdef'))`) as string;
      const d = createDecipheriv(`aes-${key.length * 8}-cbc`, Buffer.from(key), Buffer.from('0123456789abcdef'));
      expect(Buffer.concat([d.update(Buffer.from(b64, 'base64')), d.final()]).toString()).toBe('secret payload');
    }
  });

  it('rejects bad key and IV sizes, non-string arguments and wrong arity', () => {
    expect(() => ev("aes_cbc('x', 'short', '0123456789abcdef')")).toThrow('crypto/aes: invalid key size 5');
    expect(() => ev("aes_cbc('x', '0123456789abcdef', 'iv')")).toThrow('IV length must equal block size');
    expect(() => ev("aes_cbc(1, '0123456789abcdef', '0123456789abcdef')")).toThrow('plaintext must be a string');
    expect(() => ev("aes_cbc('x', '0123456789abcdef')")).toThrow('invalid number of arguments');
  });
});

describe('aes_gcm(key, plaintext)', () => {
  it('returns a random 12-byte nonce, the ciphertext and the 16-byte tag', () => {
    const key = '0123456789abcdef0123456789abcdef';
    const sealed = raw(ev(`aes_gcm('${key}', 'hello gcm')`));
    expect(sealed).toHaveLength(12 + 9 + 16);
    const d = createDecipheriv('aes-256-gcm', Buffer.from(key), sealed.subarray(0, 12));
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    expect(Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]).toString()).toBe('hello gcm');
    expect(ev(`aes_gcm('${key}', 'x') == aes_gcm('${key}', 'x')`)).toBe(false);
  });

  it('rejects bad keys and wrong arity', () => {
    expect(() => ev("aes_gcm('short', 'x')")).toThrow('invalid key size');
    expect(() => ev("aes_gcm(123, 'x')")).toThrow('key must be a string');
    expect(() => ev("aes_gcm('0123456789abcdef')")).toThrow('invalid number of arguments');
  });
});

describe('generate_jwt(json, algorithm, secret, maxAgeUnix)', () => {
  it('signs HS256/384/512 over kataras/jwt header and Go-marshalled claims (sorted keys, HTML escaped)', () => {
    const token = ev(`generate_jwt('{"sub":"1","admin":true,"n":1.5,"x":"<a&b>"}', 'hs256', 'Secret Key')`) as string;
    const [header, payload, signature] = token.split('.');
    expect(part(token, 0)).toBe('{"alg":"HS256","typ":"JWT"}');
    expect(part(token, 1)).toBe('{"admin":true,"n":1.5,"sub":"1","x":"\\u003ca\\u0026b\\u003e"}');
    expect(signature).toBe(createHmac('sha256', 'Secret Key').update(`${header}.${payload}`).digest('base64url'));
    const hs512 = ev(`generate_jwt('{"a":1}', 'HS512', 'k')`) as string;
    expect(part(hs512, 0)).toBe('{"alg":"HS512","typ":"JWT"}');
    expect(Buffer.from(hs512.split('.')[2], 'base64url')).toHaveLength(64);
    // no secret: HMAC with an empty key, as nuclei
    const unkeyed = ev(`generate_jwt('{"a":1}', 'HS384')`) as string;
    expect(unkeyed.split('.')[2]).toBe(createHmac('sha384', '').update(unkeyed.split('.').slice(0, 2).join('.')).digest('base64url'));
  });

  it('makes unsigned tokens for "none" (spelling kept) and for an empty algorithm (NONE)', () => {
    const none = ev(`generate_jwt('{"a":1}', 'None')`) as string;
    expect(none.endsWith('.')).toBe(true);
    expect(part(none, 0)).toBe('{"alg":"None","typ":"JWT"}');
    expect(part(ev(`generate_jwt('{"a":1}', '')`) as string, 0)).toBe('{"alg":"NONE","typ":"JWT"}');
  });

  it('adds iat and exp when the expiry is more than a second away, spliced as kataras/jwt does', () => {
    const token = ev(`generate_jwt('{"a":1}', 'HS256', 'k', unix_time(3600))`) as string;
    const claims = JSON.parse(part(token, 1));
    expect(Object.keys(claims)).toEqual(['a', 'iat', 'exp']);
    expect([3599, 3600]).toContain(claims.exp - claims.iat);
    expect(part(ev(`generate_jwt('{"a":1}', 'HS256', 'k', '1000')`) as string, 1)).toBe('{"a":1,}');
  });

  it('reports what nuclei reports: unknown or key-pair algorithms, claims that are not an object', () => {
    expect(() => ev(`generate_jwt('{"a":1}', 'HS1')`)).toThrow('invalid algorithm: HS1');
    expect(() => ev(`generate_jwt('{"a":1}', 'RS256', 'secret')`)).toThrow('jwt: invalid key');
    expect(() => ev(`generate_jwt('[1]', 'HS256')`)).toThrow('cannot unmarshal array');
    expect(() => ev(`generate_jwt('{nope', 'HS256')`)).toThrow(/generate_jwt: .*JSON/);
    expect(() => ev(`generate_jwt('{"a":1}', 'HS256', 'k', 'tomorrow')`)).toThrow('invalid argument type');
    expect(() => ev(`generate_jwt(1, 'HS256')`)).toThrow('must be a string');
    expect(() => ev(`generate_jwt('{}')`)).toThrow('invalid number of arguments');
  });
});
