/**
 * What a workspace tells asset discovery: root domains (names under them are in scope besides each target's
 * own domain), exclusions (exact names and `*.suffix`, never explored) and its brute-force wordlist. One row
 * per workspace; an absent row is the empty settings.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import type { ServiceContext } from '../../context.js';
import type { Prisma, PrismaClient } from '../../db.js';
import { assertCan } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { normalizeHostName } from '../../scanner/dns.js';
import { normalizeExclusionPattern } from '../../scanner/discovery/scope.js';
import { publishWorkspaceEvent } from './events.js';

export const MAX_ROOT_DOMAINS = 100;
export const MAX_EXCLUSIONS = 1000;
export const MAX_WORDLIST_ENTRIES = 10_000;
export const MAX_WORDLIST_ENTRY_LENGTH = 200;
const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,62})$/;

/** A bad entry is quoted in the message; a huge one only by its start. */
function quote(entry: string): string {
  return JSON.stringify(entry.length > 80 ? `${entry.slice(0, 80)}…` : entry);
}

function rootDomain(entry: string): string {
  let host: string;
  try {
    host = normalizeHostName(entry);
  } catch {
    throw new TypeError(`${quote(entry)} is not a valid domain name`);
  }
  if (isIP(host)) throw new TypeError(`${quote(entry)} is an IP address: root domains are domain names`);
  if (!host.includes('.')) throw new TypeError(`${quote(entry)} is not a root domain: name one with at least two labels (example.com)`);
  return host;
}

function exclusion(entry: string): string {
  try {
    return normalizeExclusionPattern(entry);
  } catch (error) {
    throw new TypeError((error as Error).message);
  }
}

function wordlistEntry(entry: string): string {
  const word = entry.trim().toLowerCase();
  if (word.length > MAX_WORDLIST_ENTRY_LENGTH) throw new TypeError(`${quote(entry)} is longer than ${MAX_WORDLIST_ENTRY_LENGTH} characters`);
  if (!word.split('.').every((label) => LABEL.test(label))) {
    throw new TypeError(`${quote(entry)} is not a valid label: use letters, digits, _ and - (dot-separated parts of 1 to 63 characters)`);
  }
  return word;
}

/**
 * A list of entries: blank ones dropped, each normalised, duplicates removed (first kept), at most `max`
 * after that. The first bad entry fails the list with its index in the field (`exclusions.3`); the rest are
 * not looked at, so a pasted file of garbage yields one clear message, not thousands.
 */
function entryList(what: string, max: number, normalize: (entry: string) => string, description: string) {
  const list = z.array(z.string({ message: 'must be a string' }), { message: `must be a list of ${what}` }).meta({ description });
  return list.transform((entries, ctx) => {
    const out = new Set<string>();
    for (const [index, entry] of entries.entries()) {
      if (entry.trim() === '') continue;
      try {
        out.add(normalize(entry));
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: [index], message: (error as Error).message });
        return z.NEVER;
      }
      if (out.size > max) {
        ctx.addIssue({ code: 'custom', message: `must hold at most ${max.toLocaleString('en-US')} ${what} (the limit), blank and duplicate ones aside` });
        return z.NEVER;
      }
    }
    return [...out];
  });
}

export const discoverySettingsFields = {
  rootDomains: entryList(
    'root domains',
    MAX_ROOT_DOMAINS,
    rootDomain,
    `At most ${MAX_ROOT_DOMAINS} domain names with at least two labels (no IP addresses); names under them are in scope.`,
  ).optional(),
  exclusions: entryList('exclusions', MAX_EXCLUSIONS, exclusion, `At most ${MAX_EXCLUSIONS} exact host names or \`*.suffix\` patterns.`).optional(),
  wordlist: entryList(
    'wordlist entries',
    MAX_WORDLIST_ENTRIES,
    wordlistEntry,
    `At most ${MAX_WORDLIST_ENTRIES} labels of at most ${MAX_WORDLIST_ENTRY_LENGTH} characters: dot-separated parts of letters, digits, _ and -.`,
  ).optional(),
};

type SettingsPatch = { rootDomains?: unknown; exclusions?: unknown; wordlist?: unknown };

/**
 * A PATCH must change something: checked by the service. The REST layer declares the plain strict object (the
 * OpenAPI generator rebuilds a refined body schema without its strictness when documenting it).
 */
export function requireASetting<T extends z.ZodType<SettingsPatch>>(schema: T) {
  return schema.refine((value) => value.rootDomains !== undefined || value.exclusions !== undefined || value.wordlist !== undefined, {
    message: 'send rootDomains, exclusions and/or wordlist',
  });
}

export const discoverySettingsBody = z.object(discoverySettingsFields).strict();
export const updateDiscoverySettingsInput = requireASetting(discoverySettingsBody);
export type UpdateDiscoverySettingsInput = z.input<typeof updateDiscoverySettingsInput>;

export interface DiscoverySettings {
  rootDomains: string[];
  exclusions: string[];
  wordlist: string[];
}

export interface DiscoverySettingsResponse extends DiscoverySettings {
  workspaceId: string;
  wordlistSize: number;
  /** Null until the settings are first saved. */
  updatedAt: Date | null;
}

type Reader = PrismaClient | Prisma.TransactionClient;
const EMPTY: DiscoverySettings = { rootDomains: [], exclusions: [], wordlist: [] };
const settingsSelect = { workspaceId: true, rootDomains: true, exclusions: true, wordlist: true, updatedAt: true } as const;

function toResponse(workspaceId: string, row: (DiscoverySettings & { updatedAt: Date }) | null): DiscoverySettingsResponse {
  const settings = row ?? EMPTY;
  return {
    workspaceId,
    rootDomains: settings.rootDomains,
    exclusions: settings.exclusions,
    wordlist: settings.wordlist,
    wordlistSize: settings.wordlist.length,
    updatedAt: row?.updatedAt ?? null,
  };
}

/** For the scan pipeline: the settings as stored (already validated and normalised), empty when never saved. */
export async function discoverySettingsOf(prisma: Reader, workspaceId: string): Promise<DiscoverySettings> {
  const row = await prisma.workspaceDiscoverySettings.findUnique({ where: { workspaceId }, select: { rootDomains: true, exclusions: true, wordlist: true } });
  return row ?? { ...EMPTY };
}

/** Members read them. */
export async function getDiscoverySettings(ctx: ServiceContext, workspaceId: string): Promise<DiscoverySettingsResponse> {
  await assertCan(ctx, 'workspace:read', { workspaceId });
  const row = await ctx.deps.prisma.workspaceDiscoverySettings.findUnique({ where: { workspaceId }, select: settingsSelect });
  return toResponse(workspaceId, row);
}

/** Batch for GraphQL's Workspace.discoverySettings: one query for many (already visible) workspaces. */
export async function discoverySettingsOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<DiscoverySettingsResponse[]> {
  const rows = await ctx.deps.prisma.workspaceDiscoverySettings.findMany({ where: { workspaceId: { in: [...workspaceIds] } }, select: settingsSelect });
  const byWorkspace = new Map(rows.map((row) => [row.workspaceId, row]));
  return workspaceIds.map((id) => toResponse(id, byWorkspace.get(id) ?? null));
}

/** Whoever may update the workspace (its discovery switches) may change them. Each list sent replaces the stored one. */
export async function updateDiscoverySettings(
  ctx: ServiceContext,
  workspaceId: string,
  input: UpdateDiscoverySettingsInput,
): Promise<DiscoverySettingsResponse> {
  const patch = validate(updateDiscoverySettingsInput, input);
  await assertCan(ctx, 'workspace:update', { workspaceId });
  const row = await ctx.deps.prisma.workspaceDiscoverySettings.upsert({
    where: { workspaceId },
    create: { ...EMPTY, ...patch, workspaceId },
    update: patch,
    select: settingsSelect,
  });
  await publishWorkspaceEvent(ctx, workspaceId, 'workspace.updated', workspaceId);
  return toResponse(workspaceId, row);
}
