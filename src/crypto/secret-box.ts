import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encryption at rest for third-party secrets we must replay (MCP header values, model API keys): AES-256-GCM
 * from node:crypto, with a key derived (HKDF-SHA256) from the instance secret. Values look like
 * `v1.<base64url(iv | tag | ciphertext)>`; a tampered or foreign value fails to decrypt.
 */
export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

export function createSecretBox(masterSecret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', masterSecret, 'perimeter', 'secret-box v1', 32));
  return {
    encrypt(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
    },
    decrypt(sealed) {
      const [version, payload] = sealed.split('.', 2);
      if (version !== VERSION || !payload) throw new SecretBoxError('Not a sealed value of this instance');
      const bytes = Buffer.from(payload, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('Sealed value is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('Sealed value cannot be decrypted with this instance secret');
      }
    },
  };
}
