import { createHash, randomUUID } from 'node:crypto';
import type { ServiceContext } from '../../context.js';
import { AppError, ValidationError } from '../../errors.js';
import { requireAdmin } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { isLogoType, LOGO_TYPES, normaliseContentType, sniffImageType, type LogoType } from './image.js';
import {
  isStoredLogoKey,
  MAX_LOGO_BYTES,
  LOGO_KEY_PREFIX,
  updateSystemConfigInput,
  uploadLogoInput,
  type UpdateSystemConfigInput,
  type UploadLogoInput,
} from './schemas.js';

/** Where the stored logo is served (outside tRPC: it answers bytes, not JSON). */
export const LOGO_ROUTE = '/api/v1/api/system-configs/logo';

const SINGLETON_ID = 1;

export interface SystemConfigView {
  name: string;
  logoPath: string | null;
  /** What a browser loads: the logo route for a stored logo, the path or URL itself otherwise. */
  logoUrl: string | null;
  updatedAt: Date;
  /** The administrator who last changed it (user id); null while it has its defaults. */
  updatedBy: string | null;
}

export interface PublicSystemConfig {
  name: string;
  logoUrl: string | null;
}

type Row = { name: string; logoPath: string | null; updatedAt: Date; updatedBy: string | null };

/** A stored logo's URL carries a version: its key is new for every upload, so the URL can be cached for good. */
export function logoVersion(logoPath: string): string {
  return createHash('sha256').update(logoPath).digest('hex').slice(0, 16);
}

export function logoUrlFor(logoPath: string | null): string | null {
  if (logoPath === null) return null;
  return isStoredLogoKey(logoPath) ? `${LOGO_ROUTE}?v=${logoVersion(logoPath)}` : logoPath;
}

function toView(row: Row): SystemConfigView {
  return { name: row.name, logoPath: row.logoPath, logoUrl: logoUrlFor(row.logoPath), updatedAt: row.updatedAt, updatedBy: row.updatedBy };
}

/** The singleton row, created with its defaults on first use (ON CONFLICT DO NOTHING: concurrent first reads are fine). */
async function loadRow(ctx: ServiceContext): Promise<Row> {
  const { prisma } = ctx.deps;
  const existing = await prisma.systemConfig.findUnique({ where: { id: SINGLETON_ID } });
  if (existing) return existing;
  await prisma.systemConfig.createMany({ data: [{ id: SINGLETON_ID }], skipDuplicates: true });
  return prisma.systemConfig.findUniqueOrThrow({ where: { id: SINGLETON_ID } });
}

/** Writes the fields given (absent ones stay), then drops the blob of a stored logo that is no longer used. */
async function writeConfig(ctx: ServiceContext, adminId: string, data: { name?: string; logoPath?: string | null }): Promise<SystemConfigView> {
  const previous = await loadRow(ctx);
  const row = await ctx.deps.prisma.systemConfig.update({ where: { id: SINGLETON_ID }, data: { ...data, updatedBy: adminId } });
  if (data.logoPath !== undefined && previous.logoPath !== row.logoPath && isStoredLogoKey(previous.logoPath)) {
    // Best effort: a blob left behind costs a few kilobytes, a failed update would cost the change.
    await ctx.deps.storage
      .delete(previous.logoPath)
      .catch((error: unknown) => ctx.deps.log.warn({ err: error, key: previous.logoPath }, 'could not delete the previous logo'));
  }
  return toView(row);
}

export async function getSystemConfig(ctx: ServiceContext): Promise<SystemConfigView> {
  requireAdmin(ctx);
  return toView(await loadRow(ctx));
}

/** What a login page shows: needs no account. */
export async function getPublicSystemConfig(ctx: ServiceContext): Promise<PublicSystemConfig> {
  const row = await loadRow(ctx);
  return { name: row.name, logoUrl: logoUrlFor(row.logoPath) };
}

export async function updateSystemConfig(ctx: ServiceContext, input: UpdateSystemConfigInput): Promise<SystemConfigView> {
  const admin = requireAdmin(ctx);
  const data = validate(updateSystemConfigInput, input);
  if (isStoredLogoKey(data.logoPath) && !(await ctx.deps.storage.exists(data.logoPath))) {
    throw new ValidationError(`Invalid input: logoPath: no uploaded logo is stored under ${data.logoPath}`, [
      { field: 'logoPath', message: 'no uploaded logo is stored under this key' },
    ]);
  }
  return writeConfig(ctx, admin.id, data);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const TYPE_NAMES = Object.keys(LOGO_TYPES).join(', ');

function decodeLogo(contentType: string, dataBase64: string): { type: LogoType; bytes: Buffer } {
  const type = normaliseContentType(contentType);
  if (type === 'image/svg+xml') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `SVG logos are not accepted: SVG can carry scripts and external references. Upload one of: ${TYPE_NAMES}`);
  }
  if (!isLogoType(type)) throw new AppError('UNSUPPORTED_MEDIA_TYPE', `A logo must be one of: ${TYPE_NAMES} (got ${type.slice(0, 100)})`);
  // Refused before decoding: the encoded length bounds the decoded one.
  if (dataBase64.length > Math.ceil(MAX_LOGO_BYTES / 3) * 4) throw new AppError('PAYLOAD_TOO_LARGE', `A logo may be at most ${MAX_LOGO_BYTES} bytes`);
  if (!BASE64.test(dataBase64) || dataBase64.length % 4 === 1) {
    throw new ValidationError('Invalid input: dataBase64: must be base64 (A-Z, a-z, 0-9, +, /, = padding)', [
      { field: 'dataBase64', message: 'must be base64' },
    ]);
  }
  const bytes = Buffer.from(dataBase64, 'base64');
  if (bytes.length > MAX_LOGO_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `A logo may be at most ${MAX_LOGO_BYTES} bytes`);
  const actual = sniffImageType(bytes);
  if (actual !== type) {
    const what = actual ? `a ${actual} image` : 'not a PNG, JPEG, GIF or WebP image';
    throw new ValidationError(`Invalid input: dataBase64: the content is ${what}, not ${type} as declared`, [
      { field: 'dataBase64', message: `content does not match contentType ${type}` },
    ]);
  }
  return { type, bytes };
}

/** Stores an uploaded logo under a new key (logos/<uuid>.<ext>) and makes it the instance logo. */
export async function uploadLogo(ctx: ServiceContext, input: UploadLogoInput): Promise<SystemConfigView> {
  const admin = requireAdmin(ctx);
  const { contentType, dataBase64 } = validate(uploadLogoInput, input);
  const { type, bytes } = decodeLogo(contentType, dataBase64);
  const key = `${LOGO_KEY_PREFIX}${randomUUID()}.${LOGO_TYPES[type]}`;
  await ctx.deps.storage.put(key, bytes, { contentType: type });
  try {
    return await writeConfig(ctx, admin.id, { logoPath: key });
  } catch (error) {
    await ctx.deps.storage.delete(key).catch(() => {});
    throw error;
  }
}

export interface StoredLogo {
  bytes: Buffer;
  contentType: LogoType;
  version: string;
}

/**
 * The stored logo for the public logo route, or null when there is none (no logo, an external one, or a
 * blob that is missing or not an image). The type comes from the bytes, never from the key.
 */
export async function readStoredLogo(ctx: ServiceContext): Promise<StoredLogo | null> {
  const { logoPath } = await loadRow(ctx);
  if (!isStoredLogoKey(logoPath)) return null;
  const bytes = await ctx.deps.storage.get(logoPath);
  if (!bytes) return null;
  const contentType = sniffImageType(bytes);
  if (!contentType) {
    ctx.deps.log.warn({ key: logoPath }, 'the stored logo is not a PNG, JPEG, GIF or WebP image: not served');
    return null;
  }
  return { bytes, contentType, version: logoVersion(logoPath) };
}
