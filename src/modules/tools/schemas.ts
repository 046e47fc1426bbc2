import { z } from 'zod';
import { pageQuery } from '../../pagination.js';

export const TOOL_CATEGORIES = [
  'dns',
  'port_scanner',
  'http_probe',
  'tls',
  'vulnerability_scanner',
  'subdomain_discovery',
  'web_crawler',
  'fingerprint',
  'other',
] as const;
export type ToolCategory = (typeof TOOL_CATEGORIES)[number];

export const RESULT_FORMATS = ['nuclei-jsonl', 'json'] as const;
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;

/** Bounds of one submission (the REST body limit bounds its bytes). */
export const MAX_RESULT_LINES = 10_000;

/** A tool's name is also the `source` of the findings it submits: a short, log-safe slug. */
const toolName = z
  .string({ message: 'must be a string' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(64, { message: 'must be at most 64 characters' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'may hold letters, digits, dot, dash and underscore, starting with a letter or digit' });
const category = z.enum(TOOL_CATEGORIES, { message: `must be one of: ${TOOL_CATEGORIES.join(', ')}` });
const description = z.string().trim().max(1000, { message: 'must be at most 1000 characters' });
const version = z.string().trim().min(1, { message: 'must not be empty' }).max(64, { message: 'must be at most 64 characters' });

export const registerToolInput = z.object({ name: toolName, category, description: description.optional(), version: version.optional() }).strict();

export const updateToolInput = z
  .object({
    name: toolName.optional(),
    category: category.optional(),
    description: description.optional(),
    version: version.optional(),
    enabled: z
      .boolean({ message: 'must be true or false' })
      .optional()
      .meta({ description: "Whether the tool may run and submit results in this workspace (built-in tools: this workspace's choice)." }),
  })
  .strict();

export const setToolEnabledInput = z.object({ enabled: z.boolean({ message: 'must be true or false' }) }).strict();

export const listToolsInput = z
  .object({
    ...pageQuery,
    limit: pageQuery.limit.default(100),
    category: category.optional(),
  })
  .strict()
  .omit({ sortOrder: true });

export type RegisterToolInput = z.input<typeof registerToolInput>;
export type UpdateToolInput = z.input<typeof updateToolInput>;
export type ListToolsInput = z.input<typeof listToolsInput>;

// ---- Results submission ----------------------------------------------------------------------------------

const severity = z.enum(SEVERITIES, { message: `must be one of: ${SEVERITIES.join(', ')}` });
const port = z.number({ message: 'must be a number' }).int({ message: 'must be a whole number' }).min(1).max(65535);
const hostName = z.string().trim().min(1).max(253);
const httpUrl = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), { message: 'must be an http(s) URL' });

/** Where a finding or asset is: a URL (a web asset), or a host with an optional port (a service) and address. */
const location = {
  url: httpUrl.optional().meta({ description: 'An http(s) URL: the finding is on the web asset scheme://host:port.' }),
  host: hostName.optional().meta({ description: 'A host name or IP address, when there is no URL.' }),
  port: port.optional().meta({ description: 'With host: the finding is on the TCP service host:port.' }),
  ip: z.ipv4().or(z.ipv6()).optional().meta({ description: 'The address the tool connected to, when known (links the service).' }),
};

const evidence = z
  .object({
    url: z.string().max(2048).optional(),
    request: z.string().max(65_536).optional(),
    response: z.string().max(65_536).optional(),
    extracted: z.record(z.string().max(100), z.union([z.string().max(4096), z.array(z.string().max(4096)).max(100), z.number(), z.boolean()])).optional(),
  })
  .strict();

const classification = z
  .object({
    cveId: z.array(z.string().max(64)).max(50).optional(),
    cweId: z.array(z.string().max(64)).max(50).optional(),
    cvssScore: z.number().min(0).max(10).optional(),
    cvssMetrics: z.string().max(256).optional(),
  })
  .strict();

export const toolFindingItem = z
  .object({
    checkId: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .meta({ description: 'The check or template id: part of the fingerprint, so a native scan of the same check dedupes with it.' }),
    name: z.string().trim().min(1).max(500),
    severity,
    ...location,
    matcher: z.string().max(500).optional().meta({ description: 'What matched within the asset; defaults to checkId.' }),
    description: z.string().max(10_000).optional(),
    remediation: z.string().max(10_000).optional(),
    evidence: evidence.optional(),
    classification: classification.optional(),
  })
  .strict()
  .refine((item) => item.url || item.host, { message: 'must have url, or host (with an optional port)', path: ['url'] });

export const toolAssetItem = z
  .object({ ...location })
  .strict()
  .refine((item) => item.url || item.host, { message: 'must have url, or host (with an optional port)', path: ['url'] });

export type ToolFindingItem = z.infer<typeof toolFindingItem>;
export type ToolAssetItem = z.infer<typeof toolAssetItem>;

/** The JSON Schema of an item, for the OpenAPI document: items are validated one by one (see lenientItems). */
function documented(schema: z.ZodType, description: string) {
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return z.unknown().meta({ override: { ...jsonSchema, description } });
}

/**
 * Items pass the request schema as they are and are validated one by one in the service, so one bad
 * item is reported with its index instead of refusing the whole submission.
 */
const lenientItems = (schema: z.ZodType, what: string) =>
  z
    .array(documented(schema, `One ${what}; an invalid one is reported in errors and the others are kept.`), { message: 'must be a list' })
    .max(MAX_RESULT_LINES, { message: `must hold at most ${MAX_RESULT_LINES} items` });

/**
 * One object (the REST layer takes object bodies only) whose `format` says which other fields apply:
 * `nuclei-jsonl` takes `data`, `json` takes `findings` and/or `assets`.
 */
export const submitResultsInput = z
  .object({
    format: z.enum(RESULT_FORMATS, { message: `must be one of: ${RESULT_FORMATS.join(', ')}` }),
    data: z
      .string({ message: 'must be a string' })
      .optional()
      .meta({ description: `format nuclei-jsonl: the output of nuclei -jsonl, one result (a JSON object) per line, at most ${MAX_RESULT_LINES} lines.` }),
    findings: lenientItems(toolFindingItem, 'finding').optional().meta({ description: 'format json: the findings.' }),
    assets: lenientItems(toolAssetItem, 'asset').optional().meta({ description: 'format json: assets seen, with or without a finding.' }),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.format === 'nuclei-jsonl') {
      if (input.data === undefined) ctx.addIssue({ code: 'custom', path: ['data'], message: 'is required with format nuclei-jsonl' });
      for (const field of ['findings', 'assets'] as const) {
        if (input[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'belongs to format json' });
      }
    } else {
      if (input.data !== undefined) ctx.addIssue({ code: 'custom', path: ['data'], message: 'belongs to format nuclei-jsonl' });
      if (input.findings === undefined && input.assets === undefined)
        ctx.addIssue({ code: 'custom', path: ['findings'], message: 'is required with format json (or assets)' });
    }
  });

export type SubmitResultsInput = z.input<typeof submitResultsInput>;
