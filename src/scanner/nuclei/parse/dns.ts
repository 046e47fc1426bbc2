/**
 * One `dns` block (nuclei pkg/protocols/dns): question name/type/class, recursion, retries, its operators.
 * `trace` and `resolvers` cannot be honoured (the engine asks through the injected resolver only): a traced block
 * is skipped, template resolvers are ignored; both with a warning.
 */
import type { DnsRequestBlock } from '../types.js';
import { type Ctx, pathString, type Seg } from './context.js';
import { checkBlockFields, checkSentText, OPERATOR_FIELDS, parseOperatorLists } from './host-blocks.js';
import { parsePayloads } from './payloads.js';

export const DNS_TYPES = ['A', 'NS', 'DS', 'CNAME', 'SOA', 'PTR', 'MX', 'TXT', 'AAAA', 'CAA', 'TLSA', 'ANY', 'SRV'] as const;

/** nuclei's class names → wire class mnemonics. */
const DNS_CLASSES: Record<string, string> = { INET: 'IN', CSNET: 'CS', CHAOS: 'CH', HESIOD: 'HS', NONE: 'NONE', ANY: 'ANY' };

/** Variables nuclei gives dns requests (GenerateDNSVariables); RDN/DN/TLD/SD need the public suffix list, which we do not ship. */
export const DNS_INPUT_VARIABLES = ['FQDN'];

const SUPPORTED = new Set([
  ...OPERATOR_FIELDS,
  'name',
  'type',
  'class',
  'recursion',
  'retries',
  'trace',
  'trace-max-recursion',
  'resolvers',
  'payloads',
  'attack',
]);

export function parseDnsBlock(
  ctx: Ctx,
  raw: Record<string, unknown>,
  segs: Seg[],
  index: number,
  templateVars: ReadonlySet<string>,
  templateStop: boolean,
): DnsRequestBlock | undefined {
  const skipReasons = checkBlockFields(ctx, raw, segs, SUPPORTED);
  const name = ctx.str(raw, 'name', segs);
  if (name === undefined || name.trim() === '') ctx.error('a dns request needs \'name\' (usually "{{FQDN}}")', segs);

  let type = 'A';
  const typeRaw = ctx.str(raw, 'type', segs);
  if (typeRaw === undefined || typeRaw.trim() === '') ctx.error("a dns request needs 'type'", segs);
  else if (!(DNS_TYPES as readonly string[]).includes(typeRaw.trim().toUpperCase())) {
    ctx.error(`unknown dns request type ${JSON.stringify(typeRaw)} (expected one of ${DNS_TYPES.join(', ')})`, [...segs, 'type']);
  } else type = typeRaw.trim().toUpperCase();

  // nuclei maps an unknown class to INET silently; an explicit typo is worth a warning
  let dnsClass = 'IN';
  const classRaw = ctx.str(raw, 'class', segs);
  if (classRaw !== undefined && classRaw.trim() !== '') {
    const mapped = DNS_CLASSES[classRaw.trim().toUpperCase()];
    if (mapped) dnsClass = mapped;
    else ctx.warn(`unknown dns class ${JSON.stringify(classRaw)}; INET is used (as nuclei does)`, [...segs, 'class']);
  }
  const recursion = ctx.bool(raw, 'recursion', segs) ?? true;
  const retries = ctx.int(raw, 'retries', segs, 0);
  if (ctx.bool(raw, 'trace', segs) === true) {
    skipReasons.push('trace (iterative resolution from the root servers) is not supported');
    ctx.warn('trace (iterative resolution from the root servers) is not supported; this request block is skipped', [...segs, 'trace'], true);
  }
  ctx.int(raw, 'trace-max-recursion', segs, 0);
  const resolvers = ctx.strList(raw, 'resolvers', segs, true) ?? [];
  if (resolvers.length) ctx.warn("'resolvers' is ignored: questions go to the scanner's DNS servers (SCAN_DNS_SERVERS)", [...segs, 'resolvers'], true);

  const { matchers, extractors } = parseOperatorLists(ctx, raw, segs);
  // nuclei dns getMatchPart: body, all and no part mean the whole message
  for (const op of [...matchers, ...extractors]) if (op.part === 'body' || op.part === 'all') op.part = 'raw';

  // inline payloads (dns templates are not read with their library's helper files yet)
  const payloadSpec = parsePayloads(ctx, raw, segs, [raw.name, raw.matchers, raw.extractors]);
  if (payloadSpec.skip) skipReasons.push(payloadSpec.skip);
  const payloadNames = payloadSpec.payloads?.sets.map((s) => s.name) ?? [];
  const provided = new Set([...DNS_INPUT_VARIABLES, ...templateVars, ...payloadNames, ...extractors.filter((e) => e.name).map((e) => e.name!)]);
  skipReasons.push(...checkSentText(ctx, skipReasons.length > 0, [name ?? ''], segs, provided, 'dns'));

  return {
    path: pathString(segs),
    index,
    id: ctx.str(raw, 'id', segs)?.trim() || undefined,
    name: name ?? '',
    type,
    class: dnsClass,
    recursion,
    retries: retries && retries > 0 ? retries : 3,
    resolvers,
    stopAtFirstMatch: ctx.bool(raw, 'stop-at-first-match', segs) ?? templateStop,
    matchersCondition: ctx.condition(raw, 'matchers-condition', segs),
    matchers,
    extractors,
    ...(payloadSpec.payloads ? { payloads: payloadSpec.payloads } : {}),
    skip: skipReasons.length ? [...new Set(skipReasons)].join('; ') : undefined,
  };
}
