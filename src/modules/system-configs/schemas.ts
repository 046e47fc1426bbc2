import { z } from 'zod';
import { blobKeyProblem } from '../../storage/index.js';

/** Uploaded logos live in the blob store under this prefix; only keys under it are ever served publicly. */
export const LOGO_KEY_PREFIX = 'logos/';
export const MAX_LOGO_BYTES = 512 * 1024;
export const MAX_LOGO_PATH_LENGTH = 1024;

/** Our own blob areas that hold private content (templates, scan results): never a logo. */
const PRIVATE_KEY_PREFIXES = ['nuclei-templates/', 'scan-artefacts/'];

const FORMS = 'must be an http(s) URL, a path starting with /, a key under logos/, or a storage path bucket/name (e.g. system/logo.png)';

/**
 * OASM's form: `<bucket>/<object key>` as its storage returns it (`system/logo-<uuid>.png`), which its clients
 * send back. Plain file-name characters only, so the path is inert wherever a client puts it.
 */
const STORAGE_PATH = /^[a-z0-9][a-z0-9.-]{0,62}(\/[A-Za-z0-9_][A-Za-z0-9._-]*)+$/;

/**
 * Why a logo path is refused, or null. A logo path is one of four things, so the public logo URL derived
 * from it is always safe to put in an `<img src>`:
 * - an http(s) URL of an image hosted elsewhere;
 * - a root-relative path (`/branding/logo.png`) that the front end serves itself;
 * - a key under `logos/` in our blob store (what an upload sets), served by GET /api/system-configs/logo;
 * - a storage path `bucket/name` as OASM stores it (its clients resolve it against their storage).
 * Other schemes (`javascript:`, `data:`), protocol-relative URLs, markup characters and our private blob
 * areas (templates, scan results) are refused.
 */
export function logoPathProblem(value: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'must not contain control characters';
  if (/[<>"'`\s]/.test(value)) return 'must not contain markup characters, quotes or spaces';
  if (/^[a-z][a-z0-9+.-]*:/i.test(value)) {
    return /^https?:\/\/[^/]/i.test(value) && URL.canParse(value) ? null : FORMS;
  }
  if (value.startsWith('//')) return 'must not be a protocol-relative URL: give the scheme (https://…)';
  if (value.startsWith('/'))
    return value.includes('\\') || value.split(/[?#]/)[0]!.split('/').includes('..') ? 'must not contain .. segments or backslashes' : null;
  const keyProblem = blobKeyProblem(value);
  if (keyProblem) return `as a storage key ${keyProblem}`;
  if (value.startsWith(LOGO_KEY_PREFIX)) return null;
  if (PRIVATE_KEY_PREFIXES.some((prefix) => value.startsWith(prefix)))
    return `must not name a private storage area (${value.split('/')[0]}/): uploaded logos live under logos/`;
  return STORAGE_PATH.test(value) ? null : FORMS;
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
export const logoPathInput = z
  .preprocess((value) => (isEmptyObject(value) ? null : value), logoPathString.nullable())
  .meta({
    description:
      'An http(s) URL, a path starting with /, a stored logo key (logos/…), or a storage path bucket/name as OASM stores it (system/logo-<uuid>.png); null or {} clears the logo. Absent leaves it as it is.',
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
    contentType: z
      .string({ message: 'must be a string' })
      .trim()
      .min(1, { message: 'must not be empty' })
      .max(100, { message: 'must be at most 100 characters' })
      // Not a media type at all (e.g. `__proto__`) is a 400; a media type we do not take is a 415 (service).
      .regex(/^[\w.+-]+\/[\w.+-]+\s*(;.*)?$/, { message: 'must be a media type such as image/png' }),
    // No length limit here: an oversized logo is a 413, decided by the service, not a 400.
    dataBase64: z.string({ message: 'must be a base64 string' }).min(1, { message: 'must not be empty' }),
  })
  .strict();

export type UpdateSystemConfigInput = z.input<typeof updateSystemConfigInput>;
export type UploadLogoInput = z.input<typeof uploadLogoInput>;
