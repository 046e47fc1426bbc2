/**
 * One `network` (legacy `tcp`) block, as nuclei's pkg/protocols/network defines it: host entries (`tls://` for
 * TLS), `port` / `exclude-ports`, `inputs` (text or hex data, `read`, `name`), `read-size` / `read-all`, and the
 * block's matchers and extractors.
 */
import type { NetworkAddress, NetworkInput, NetworkRequestBlock } from '../network-types.js';
import { type PayloadParseOptions, parsePayloads } from './payloads.js';
import { type Ctx, isHex, isRecord, pathString, type Seg, typeName } from './context.js';
import { markerUnknownFunctions } from './dsl.js';
import { parseOperatorLists } from './operators.js';
import { unknownVariablesIn, warnUnknownVariables } from './unknown-variables.js';

/** nuclei's default for the final read. */
export const DEFAULT_READ_SIZE = 1024;

const BLOCK_FIELDS = new Set([
  'id',
  'host',
  'port',
  'exclude-ports',
  'inputs',
  'read-size',
  'read-all',
  'stop-at-first-match',
  'threads',
  'matchers',
  'extractors',
  'matchers-condition',
  'attack',
  'payloads',
]);
const INPUT_FIELDS = new Set(['data', 'type', 'read', 'name']);

/**
 * Service names nuclei resolves in `port:` (Go's net.LookupPort plus nuclei's fallback table), limited to TCP
 * services a template plausibly names. An unknown name is an error, as in nuclei.
 */
const SERVICE_PORTS: Record<string, number> = {
  ftp: 21,
  ssh: 22,
  telnet: 23,
  smtp: 25,
  domain: 53,
  finger: 79,
  http: 80,
  pop3: 110,
  sunrpc: 111,
  nntp: 119,
  imap: 143,
  snmp: 161,
  bgp: 179,
  ldap: 389,
  https: 443,
  'microsoft-ds': 445,
  submission: 587,
  ldaps: 636,
  rsync: 873,
  imaps: 993,
  pop3s: 995,
  mssql: 1433,
  mqtt: 1883,
  mysql: 3306,
  rdp: 3389,
  postgres: 5432,
  postgresql: 5432,
  amqp: 5672,
  vnc: 5900,
  redis: 6379,
  elasticsearch: 9200,
  memcached: 11211,
  mongodb: 27017,
};

/** `port` / `exclude-ports`: a comma-separated string or a number; ports de-duplicated in order. */
function parsePortList(ctx: Ctx, raw: Record<string, unknown>, key: string, segs: Seg[]): number[] {
  const v = raw[key];
  if (v === undefined || v === null || v === '') return [];
  if (typeof v !== 'string' && typeof v !== 'number') {
    ctx.error(`'${key}' must be a port or a comma-separated list of ports, got ${typeName(v)}`, [...segs, key]);
    return [];
  }
  const out: number[] = [];
  for (const part of String(v).split(',')) {
    const name = part.trim();
    if (name === '') continue;
    const port = /^\d+$/.test(name) ? Number(name) : SERVICE_PORTS[name.toLowerCase()];
    if (port === undefined || port < 1 || port > 65535) {
      ctx.error(`invalid port ${JSON.stringify(name)} in '${key}' (expected 1-65535 or a known service name)`, [...segs, key]);
      continue;
    }
    if (!out.includes(port)) out.push(port);
  }
  return out;
}

function parseInput(ctx: Ctx, raw: unknown, segs: Seg[]): NetworkInput | undefined {
  if (!isRecord(raw)) {
    ctx.error(`input must be a mapping, got ${typeName(raw)}`, segs);
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!INPUT_FIELDS.has(key)) ctx.warn(`unknown input field '${key}' ignored`, [...segs, key], true);
  }
  // Go reads `data` as a string: keep `0000001a` or `0x01` as written, not as the YAML number
  let data = '';
  if (raw.data !== undefined && raw.data !== null) {
    if (typeof raw.data === 'string') data = raw.data;
    else if (typeof raw.data === 'number' || typeof raw.data === 'boolean') data = ctx.scalarSource([...segs, 'data']) ?? String(raw.data);
    else ctx.error(`'data' must be a string, got ${typeName(raw.data)}`, [...segs, 'data']);
  }
  const typeRaw = (ctx.str(raw, 'type', segs) ?? 'text').trim().toLowerCase() || 'text';
  let type: NetworkInput['type'] = 'text';
  if (typeRaw === 'hex') type = 'hex';
  else if (typeRaw !== 'text') ctx.error(`invalid input type ${JSON.stringify(typeRaw)} (expected hex or text)`, [...segs, 'type']);
  if (type === 'hex' && !data.includes('{{') && !isHex(data)) ctx.error(`invalid hex data ${JSON.stringify(data)}`, [...segs, 'data']);
  const read = ctx.int(raw, 'read', segs, 0) ?? 0;
  const name = ctx.str(raw, 'name', segs)?.trim() || undefined;
  return { data, type, read, name };
}

function parseHosts(ctx: Ctx, raw: Record<string, unknown>, segs: Seg[]): NetworkAddress[] {
  const hosts = ctx.strList(raw, 'host', segs, true);
  if (hosts === undefined || hosts.length === 0) {
    if (hosts !== undefined || raw.host === undefined || raw.host === null)
      ctx.error("a network request needs at least one 'host' entry (e.g. {{Hostname}})", segs);
    return [];
  }
  return hosts.map((h) => {
    const entry = h.trim();
    return entry.startsWith('tls://') ? { address: entry.slice('tls://'.length), tls: true } : { address: entry, tls: false };
  });
}

export function parseNetworkBlock(
  ctx: Ctx,
  raw: unknown,
  segs: Seg[],
  index: number,
  knownVars: Set<string>,
  templateStopAtFirstMatch: boolean,
  payloadOptions: PayloadParseOptions = {},
): NetworkRequestBlock | undefined {
  if (!isRecord(raw)) {
    ctx.error(`request must be a mapping, got ${typeName(raw)}`, segs);
    return undefined;
  }
  const skipReasons: string[] = [];
  for (const key of Object.keys(raw)) {
    if (!BLOCK_FIELDS.has(key)) ctx.warn(`unknown request field '${key}' ignored`, [...segs, key], true);
  }
  if (raw.attack !== undefined && (raw.payloads === undefined || raw.payloads === null))
    ctx.warn("'attack' without 'payloads' is ignored", [...segs, 'attack'], true);
  const payloadSpec = parsePayloads(ctx, raw, segs, [raw.inputs, raw.host, raw.matchers, raw.extractors], payloadOptions);
  if (payloadSpec.skip) skipReasons.push(payloadSpec.skip);
  const payloadNames = new Set(payloadSpec.payloads?.sets.map((s) => s.name));

  const addresses = parseHosts(ctx, raw, segs);
  const ports = parsePortList(ctx, raw, 'port', segs);
  const excludePorts = parsePortList(ctx, raw, 'exclude-ports', segs);
  const inputs: NetworkInput[] = [];
  if (raw.inputs !== undefined && raw.inputs !== null) {
    if (!Array.isArray(raw.inputs)) ctx.error(`'inputs' must be a list, got ${typeName(raw.inputs)}`, [...segs, 'inputs']);
    else
      raw.inputs.forEach((inputRaw, i) => {
        const input = parseInput(ctx, inputRaw, [...segs, 'inputs', i]);
        if (input) inputs.push(input);
      });
  }
  const readSize = ctx.int(raw, 'read-size', segs, 0) || DEFAULT_READ_SIZE;
  const readAll = ctx.bool(raw, 'read-all', segs) ?? false;
  const stopAtFirstMatch = ctx.bool(raw, 'stop-at-first-match', segs) ?? templateStopAtFirstMatch;
  const matchersCondition = ctx.condition(raw, 'matchers-condition', segs);
  ctx.int(raw, 'threads', segs, 0);
  const id = ctx.str(raw, 'id', segs)?.trim() || undefined;

  const { matchers, extractors } = parseOperatorLists(ctx, raw, segs);
  // nuclei's network Match / Extract know no status matcher and no json / xpath extractor: they never fire
  for (const m of matchers) {
    if (m.type === 'status') ctx.warn('status matchers never match a network response (it has no status code)', [...segs, 'matchers', m.index, 'type']);
  }
  for (const e of extractors) {
    if (e.type !== 'json') continue;
    e.unsupported ??= 'json extractors do not run on network responses';
    ctx.warn('json extractors do not run on network responses; this extractor is skipped', [...segs, 'extractors', e.index, 'type']);
  }

  // what is sent: host entries and input data
  const sent = [...addresses.map((a) => a.address), ...inputs.map((i) => i.data)];
  const unknownFns = new Set<string>();
  for (const text of sent) for (const f of markerUnknownFunctions(text)) unknownFns.add(f);
  if (unknownFns.size) {
    const reason = `unknown helper function${unknownFns.size > 1 ? 's' : ''} ${[...unknownFns].join(', ')}`;
    skipReasons.push(reason);
    ctx.warn(`${reason} used in the request; this request block is skipped`, segs);
  }
  // earlier named reads feed later inputs
  const readNames = new Set(inputs.filter((i) => i.name).map((i) => i.name!));
  const unknownVars = unknownVariablesIn(sent, (v) => knownVars.has(v) || readNames.has(v) || payloadNames.has(v));
  if (!skipReasons.length) warnUnknownVariables(ctx, unknownVars, segs, 'network');

  return {
    path: pathString(segs),
    index,
    id,
    addresses,
    ports,
    excludePorts,
    inputs,
    readSize,
    readAll,
    stopAtFirstMatch,
    matchersCondition,
    matchers,
    extractors,
    ...(payloadSpec.payloads ? { payloads: payloadSpec.payloads } : {}),
    skip: skipReasons.length ? [...new Set(skipReasons)].join('; ') : undefined,
  };
}

/**
 * The template's `network` or `tcp` list (nuclei accepts either key, not both). Undefined when the template has
 * neither; extractor names of every block are added to `knownVars` first, so later blocks may use them.
 */
export function parseNetworkProtocol(
  ctx: Ctx,
  root: Record<string, unknown>,
  knownVars: Set<string>,
  templateStopAtFirstMatch: boolean,
  payloadOptions: PayloadParseOptions = {},
): NetworkRequestBlock[] | undefined {
  const given = (['network', 'tcp'] as const).filter((k) => root[k] !== undefined && root[k] !== null);
  if (given.length === 0) return undefined;
  if (given.length > 1) {
    ctx.error("use 'tcp' or 'network', not both", ['network'], true);
    return undefined;
  }
  const key = given[0];
  const list = root[key];
  if (!Array.isArray(list)) {
    ctx.error(`'${key}' must be a list of requests, got ${typeName(list)}`, [key]);
    return undefined;
  }
  if (list.length === 0) {
    ctx.error(`'${key}' has no requests`, [key]);
    return undefined;
  }
  for (const b of list) {
    if (isRecord(b) && Array.isArray(b.extractors)) {
      for (const e of b.extractors) if (isRecord(e) && typeof e.name === 'string') knownVars.add(e.name);
    }
  }
  const blocks: NetworkRequestBlock[] = [];
  list.forEach((b, i) => {
    const block = parseNetworkBlock(ctx, b, [key, i], i, knownVars, templateStopAtFirstMatch, payloadOptions);
    if (block) blocks.push(block);
  });
  // a block without operators is common in multi-step templates (it logs in or triggers something first)
  if (blocks.length === list.length && blocks.every((b) => b.matchers.length === 0 && b.extractors.length === 0)) {
    ctx.warn('no request has matchers or extractors; this template can never produce a finding', [key]);
  }
  return blocks;
}
