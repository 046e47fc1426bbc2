import { createHash } from 'node:crypto';

/**
 * How every bearer secret we issue is stored: session tokens, personal API tokens (`prm_…`), tool keys
 * (`ptk_…`) and workspace API keys (`pwk_…`). They are long random values, so a plain SHA-256 (hex) is enough
 * to make a leaked table useless as credentials, and one indexed lookup still finds the row.
 */
export function hashBearerSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
