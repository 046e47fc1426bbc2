import { z } from 'zod';

/**
 * MCP server configurations. Units and bounds the seed leaves open (2.9), decided here:
 * - `timeout`: seconds a request to the server may take, 1–300 (default 30);
 * - `sse_read_timeout`: seconds an SSE stream may stay silent before the client gives up, 1–3600 (default 300).
 */
export const MCP_TRANSPORTS = ['sse', 'streamable-http'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

export const TIMEOUT_SECONDS = { min: 1, max: 300, default: 30 } as const;
export const SSE_READ_TIMEOUT_SECONDS = { min: 1, max: 3600, default: 300 } as const;
export const MAX_SERVERS_PER_WORKSPACE = 50;
export const MAX_HEADERS = 32;
export const MAX_HEADER_VALUE_LENGTH = 8192;
export const MAX_ALLOWED_TOOLS = 200;
export const MAX_URL_LENGTH = 2048;

/** Safe in a URL path segment, so `/mcp-configs/{name}` never needs escaping. */
export const MCP_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const mcpServerName = z
  .string({ message: 'must be a string' })
  .regex(MCP_NAME_PATTERN, { message: 'must be 1–64 characters: letters, digits, "_", "-" or ".", starting with a letter or digit' });

/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** What node:http accepts in a header value: no CR, LF, NUL or other control characters (tab is fine). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the transport itself sets (framing, connection, MCP session): a configuration may not override them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

/**
 * A JSON body boolean or number, never coerced: the REST route table marks bare z.boolean()/z.number() fields
 * of query inputs `coerce` (rest/input-coercion.ts), which would read "false" as true. It leaves a pipe alone.
 */
const jsonBoolean = () => z.boolean({ message: 'must be true or false' }).pipe(z.boolean());
const seconds = (bounds: { min: number; max: number }) =>
  z
    .number({ message: 'must be a number of seconds' })
    .int({ message: 'must be a whole number of seconds' })
    .min(bounds.min, { message: `must be at least ${bounds.min} second` })
    .max(bounds.max, { message: `must be at most ${bounds.max} seconds` })
    .pipe(z.number());

const url = z
  .string({ message: 'must be a string' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(MAX_URL_LENGTH, { message: `must be at most ${MAX_URL_LENGTH} characters` })
  .superRefine((value, ctx) => {
    const parsed = URL.canParse(value) ? new URL(value) : undefined;
    if (!parsed) return void ctx.addIssue({ code: 'custom', message: 'must be an absolute http:// or https:// URL' });
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must use the http or https scheme' });
    if (parsed.username || parsed.password)
      ctx.addIssue({ code: 'custom', message: 'must not carry credentials: send them in headers, which are stored encrypted' });
  });

const headers = z
  .record(z.string(), z.string({ message: 'must be a string' }), { message: 'must be an object of header names to string values' })
  .superRefine((value, ctx) => {
    const names = Object.keys(value);
    if (names.length > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_HEADERS} headers` });
    const seen = new Set<string>();
    for (const name of names) {
      const lower = name.toLowerCase();
      const issue = (message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
      if (!HEADER_NAME.test(name)) issue('is not a valid header name');
      else if (RESERVED_HEADERS.has(lower)) issue('is set by the transport itself and cannot be configured');
      else if (seen.has(lower)) issue('is given twice (header names are case-insensitive)');
      seen.add(lower);
      const headerValue = value[name]!;
      if (headerValue.length > MAX_HEADER_VALUE_LENGTH) issue(`must be at most ${MAX_HEADER_VALUE_LENGTH} characters`);
      else if (!HEADER_VALUE.test(headerValue)) issue('must not contain line breaks or control characters');
    }
  })
  .transform((value) => Object.fromEntries(Object.entries(value).map(([name, headerValue]) => [name.toLowerCase(), headerValue])));

const allowedTools = z
  .array(z.string({ message: 'must be a string' }).trim().min(1, { message: 'must not be empty' }).max(128, { message: 'must be at most 128 characters' }), {
    message: 'must be a list of tool names',
  })
  .max(MAX_ALLOWED_TOOLS, { message: `must name at most ${MAX_ALLOWED_TOOLS} tools` })
  .transform((names) => [...new Set(names)]);

/** The body of PUT /mcp-configs/{name}: a whole configuration (absent fields take their defaults). */
export const putMcpServerInput = z
  .object({
    url,
    transport: z.enum(MCP_TRANSPORTS, { message: `must be one of: ${MCP_TRANSPORTS.join(', ')}` }),
    headers: headers.default({}),
    disabled: jsonBoolean().default(false),
    allowed_tools: allowedTools.default([]),
    timeout: seconds(TIMEOUT_SECONDS).default(TIMEOUT_SECONDS.default),
    sse_read_timeout: seconds(SSE_READ_TIMEOUT_SECONDS).default(SSE_READ_TIMEOUT_SECONDS.default),
  })
  .strict();

export const toggleMcpServerInput = z.object({ disabled: jsonBoolean() }).strict();

export type PutMcpServerInput = z.input<typeof putMcpServerInput>;
export type ToggleMcpServerInput = z.input<typeof toggleMcpServerInput>;
