import type { SecretBox } from '../../crypto/secret-box.js';
import { ValidationError } from '../../errors.js';

/**
 * Header values of MCP server configurations. EVERY value is stored encrypted (SecretBox: AES-256-GCM with a
 * key derived from the instance secret), so a value that holds a secret under an unexpected name is still
 * sealed at rest. On the way out EVERY value is masked as MASK: a secret can hide under any name (`x-tenant`,
 * `x-upstream`), and guessing from names leaked the ones we did not guess. A PUT that sends MASK back for a
 * header keeps that header's stored value, so clients can round-trip what they read.
 */
export const MASK = '***';

export type SealedHeaders = Record<string, string>;

/** The stored JSON, defensively: anything that is not an object of strings counts as no headers. */
export function asSealed(stored: unknown): SealedHeaders {
  if (!stored || typeof stored !== 'object' || Array.isArray(stored)) return {};
  return Object.fromEntries(Object.entries(stored).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** Seals incoming values; MASK keeps the stored value of the same header (a 400 when there is none). */
export function sealHeaders(box: SecretBox, incoming: Record<string, string>, stored: SealedHeaders): SealedHeaders {
  const sealed: SealedHeaders = {};
  const missing: string[] = [];
  for (const [name, value] of Object.entries(incoming)) {
    if (value === MASK) {
      if (stored[name] === undefined) missing.push(name);
      else sealed[name] = stored[name];
    } else {
      sealed[name] = box.encrypt(value);
    }
  }
  if (missing.length) {
    throw new ValidationError(
      `Invalid input: ${missing.map((name) => `headers.${name}: is the mask "${MASK}" but no value is stored for it`).join('; ')}`,
      missing.map((name) => ({ field: `headers.${name}`, message: `is the mask "${MASK}" but no value is stored for it` })),
    );
  }
  return sealed;
}

/** What readers see: the header names, every value masked. */
export function maskHeaders(stored: SealedHeaders): Record<string, string> {
  return Object.fromEntries(Object.keys(stored).map((name) => [name, MASK]));
}

/** The clear values, for the outgoing request only. Throws SecretBoxError when the instance secret changed. */
export function openHeaders(box: SecretBox, stored: SealedHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(stored).map(([name, sealed]) => [name, box.decrypt(sealed)]));
}
