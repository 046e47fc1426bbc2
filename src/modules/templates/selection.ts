/**
 * Which templates a scan runs: a selection by id, tag, severity, author and protocol, with exclusions, and
 * whether the built-in pack takes part. A workspace stores one (its template settings); a scan may add its own.
 *
 * A template is selected when it passes every include filter that is set (a list: any of its entries; ids,
 * tags and authors compare without case) and matches no exclusion. A scan narrows its workspace: a template
 * runs only when both selections select it. `useDefaultPack` is the exception: the scan's value, when given,
 * decides for that scan; otherwise the workspace's (default true).
 */
import { z } from 'zod';
import type { NucleiTemplate } from '../../scanner/nuclei/index.js';
import { severityOf } from './pack.js';

export const TEMPLATE_SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export const TEMPLATE_PROTOCOLS = ['http', 'network', 'dns', 'ssl'] as const;
export type TemplateProtocol = (typeof TEMPLATE_PROTOCOLS)[number];
export const MAX_SELECTION_ENTRIES = 1_000;

const entry = (what: string) =>
  z
    .string({ message: 'must be a string' })
    .trim()
    .min(1, { message: 'must not be empty' })
    .max(200, { message: `must be a ${what} of at most 200 characters` });
const list = <T extends z.ZodType>(item: T, description: string) =>
  z
    .array(item, { message: 'must be a list' })
    .max(MAX_SELECTION_ENTRIES, { message: `must hold at most ${MAX_SELECTION_ENTRIES} entries` })
    .optional()
    .meta({ description });
const severity = z.enum(TEMPLATE_SEVERITIES, { message: `must be one of: ${TEMPLATE_SEVERITIES.join(', ')}` });
const protocol = z.enum(TEMPLATE_PROTOCOLS, { message: `must be one of: ${TEMPLATE_PROTOCOLS.join(', ')}` });

export const templateSelectionInput = z
  .object({
    includeIds: list(entry('template id'), 'Only templates with one of these ids (nuclei `id`).'),
    excludeIds: list(entry('template id'), 'Never templates with one of these ids.'),
    includeTags: list(entry('tag'), 'Only templates with at least one of these tags.'),
    excludeTags: list(entry('tag'), 'Never templates with one of these tags.'),
    severities: list(severity, "Only templates of these severities (nuclei's `unknown` counts as info)."),
    excludeSeverities: list(severity, 'Never templates of these severities.'),
    authors: list(entry('author'), 'Only templates by one of these authors.'),
    protocols: list(protocol, 'Only templates with requests of one of these protocols (http, network, dns, ssl).'),
    useDefaultPack: z
      .boolean({ message: 'must be true or false' })
      .optional()
      .meta({ description: 'Whether the built-in template pack runs (default true); the workspace’s own templates run either way.' }),
  })
  .strict()
  .meta({ id: 'TemplateSelection', description: 'Which templates run: every filter set must pass, no exclusion may match.' });

export type TemplateSelection = z.infer<typeof templateSelectionInput>;

/** The selection as stored: lists de-duplicated, empty lists and absent fields left out. */
export function normalizeSelection(selection: TemplateSelection = {}): TemplateSelection {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(selection)) {
    if (Array.isArray(value)) {
      if (value.length) out[key] = [...new Set(value)];
    } else if (value !== undefined) out[key] = value;
  }
  return out as TemplateSelection;
}

/** Whether the built-in pack runs: the scan's choice, else the workspace's, else yes. */
export function usesDefaultPack(workspace: TemplateSelection, scan: TemplateSelection = {}): boolean {
  return scan.useDefaultPack ?? workspace.useDefaultPack ?? true;
}

export function protocolsOf(template: NucleiTemplate): TemplateProtocol[] {
  const out: TemplateProtocol[] = [];
  if (template.requests.length) out.push('http');
  if (template.network?.length) out.push('network');
  if (template.dns?.length) out.push('dns');
  if (template.ssl?.length) out.push('ssl');
  return out;
}

const lower = (values: readonly string[] | undefined) => (values ? new Set(values.map((value) => value.toLowerCase())) : undefined);
const anyIn = (values: readonly string[], wanted: ReadonlySet<string>) => values.some((value) => wanted.has(value.toLowerCase()));

/** A predicate over parsed templates for one selection (its lists lower-cased once). */
export function selects(selection: TemplateSelection): (template: NucleiTemplate) => boolean {
  const includeIds = lower(selection.includeIds);
  const excludeIds = lower(selection.excludeIds);
  const includeTags = lower(selection.includeTags);
  const excludeTags = lower(selection.excludeTags);
  const authors = lower(selection.authors);
  const severities = selection.severities ? new Set<string>(selection.severities) : undefined;
  const excludeSeverities = new Set<string>(selection.excludeSeverities ?? []);
  const protocols = selection.protocols ? new Set<string>(selection.protocols) : undefined;
  return (template) => {
    const id = template.id.toLowerCase();
    const severity = severityOf(template);
    if (excludeIds?.has(id) || anyIn(template.info.tags, excludeTags ?? new Set()) || excludeSeverities.has(severity)) return false;
    if (includeIds && !includeIds.has(id)) return false;
    if (includeTags && !anyIn(template.info.tags, includeTags)) return false;
    if (severities && !severities.has(severity)) return false;
    if (authors && !anyIn(template.info.author, authors)) return false;
    if (protocols && !protocolsOf(template).some((p) => protocols.has(p))) return false;
    return true;
  };
}
