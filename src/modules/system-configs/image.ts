/** Raster image types a logo may have, with the extension its blob key gets. */
export const LOGO_TYPES = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
} as const;

export type LogoType = keyof typeof LOGO_TYPES;

const ALIASES: Record<string, LogoType> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'image/x-png': 'image/png' };

/** `Image/PNG; charset=x` → `image/png`; aliases to their registered names. */
export function normaliseContentType(value: string): string {
  const bare = value.split(';')[0]!.trim().toLowerCase();
  // Own keys only: `__proto__` must not find Object.prototype.
  return Object.hasOwn(ALIASES, bare) ? ALIASES[bare]! : bare;
}

export function isLogoType(value: string): value is LogoType {
  return Object.hasOwn(LOGO_TYPES, value);
}

function startsWith(bytes: Buffer, signature: number[] | string, at = 0): boolean {
  const expected = typeof signature === 'string' ? Buffer.from(signature, 'latin1') : Buffer.from(signature);
  return bytes.length >= at + expected.length && bytes.subarray(at, at + expected.length).equals(expected);
}

/**
 * The image type the bytes are, from their signature, or null when they are none of the logo types. Checks a
 * little past the magic number (PNG's first chunk is IHDR, WebP's first chunk is VP8/VP8L/VP8X) so that a
 * file merely starting with a signature does not pass.
 */
export function sniffImageType(bytes: Buffer): LogoType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) && startsWith(bytes, 'IHDR', 12)) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff]) && bytes.length >= 4) return 'image/jpeg';
  if ((startsWith(bytes, 'GIF87a') || startsWith(bytes, 'GIF89a')) && bytes.length >= 13) return 'image/gif';
  if (startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBP', 8) && /^VP8[ LX]$/.test(bytes.subarray(12, 16).toString('latin1'))) return 'image/webp';
  return null;
}
