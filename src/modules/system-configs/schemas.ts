import { z } from 'zod';
import { blobKeyProblem } from '../../storage/index.js';

/** Uploaded logos live in the blob store under this prefix; only keys under it are ever served publicly. */
export const LOGO_KEY_PREFIX = 'logos/';
export const MAX_LOGO_BYTES = 512 * 1024;
export const MAX_LOGO_PATH_LENGTH = 1024;

/**
 * Why a logo path is refused, or null. A logo path is one of three things, so the public logo URL derived
 * from it is always safe to put in an `<img src>`:
 * - an http(s) URL of an image hosted elsewhere;
 * - a root-relative path (`/branding/logo.png`) that the front end serves itself;
 * - a key under `logos/` in our blob store (what an upload sets), served by GET /api/system-configs/logo.
 * Other schemes (`javascript:`, `data:`), protocol-relative URLs and other blob keys (which could expose
 * templates or other private files through the public logo route) are refused.
 */
export function logoPathProblem(value: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'must not contain control characters';
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) {
    return /^https?:\/\/[^/]/i.test(value) && URL.canParse(value) ? null : 'must be an http(s) URL, a path starting with /, or a key under logos/';
  }
  if (value.startsWith('//')) return 'must not be a protocol-relative URL: give the scheme (https://…)';
  if (value.startsWith('/')) return value.includes('\\') || value.split(/[?#]/)[0]!.split('/').includes('..') ? 'must not contain .. segments or backslashes' : null;
  if (!value.startsWith(LOGO_KEY_PREFIX)) return 'must be an http(s) URL, a path starting with /, or a key under logos/';
  const keyProblem = blobKeyProblem(value);
  return keyProblem ? `as a storage key ${keyProblem}` : null;
}

export function isStoredLogoKey(logoPath: string | null | undefined): logoPath is string {
  return typeof logoPath === 'string' && logoPath.startsWith(LOGO_KEY_PREFIX) && blobKeyProblem(logoPath) === null;
}

const name = z.string({ message: 'must be a string' }).trim().min(1, { message: 'must not be empty' }).max(100, { message: 'must be at most 100 characters' });

const logoPathString = z
  .string({ message: 'must be a path string, null, or {} (both clear the logo)' })
  .trim()
  .min(1, { message: 'must not be empty (send null to clear the logo)' })
  .max(MAX_LOGO_PATH_LENGTH, { message: `must be at most ${MAX_LOGO_PATH_LENGTH} characters` })
  .superRefine((value, ctx) => {
    const problem = logoPathProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** The interface description shows `logoPath` as an object given empty: `{}` means "no logo", like null. */
export const logoPathInput = z.preprocess((value) => (isEmptyObject(value) ? null : value), logoPathString.nullable()).meta({
  description: 'An http(s) URL, a path starting with /, or a stored logo key (logos/…); null or {} clears the logo. Absent leaves it as it is.',
  override: {
    anyOf: [{ type: 'string', minLength: 1, maxLength: MAX_LOGO_PATH_LENGTH }, { type: 'null' }, { type: 'object', maxProperties: 0 }],
  },
});

export const updateSystemConfigInput = z.object({ name: name.optional(), logoPath: logoPathInput.optional() }).strict();

/**
 * A logo upload through the JSON front doors. The declared type is checked against the bytes; SVG is refused
 * (it is active content: scripts, event handlers, external references), so is anything but PNG, JPEG, GIF, WebP.
 */
export const uploadLogoInput = z
  .object({
    contentType: z.string({ message: 'must be a string' }).trim().min(1, { message: 'must not be empty' }).max(100, { message: 'must be at most 100 characters' }),
    // No length limit here: an oversized logo is a 413, decided by the service, not a 400.
    dataBase64: z.string({ message: 'must be a base64 string' }).min(1, { message: 'must not be empty' }),
  })
  .strict();

export type UpdateSystemConfigInput = z.input<typeof updateSystemConfigInput>;
export type UploadLogoInput = z.input<typeof uploadLogoInput>;
