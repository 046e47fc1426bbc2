/** The `dns:` and `ssl:` block lists of a template (protocols run against a host, see engine/dns.ts, engine/ssl.ts). */
import type { DnsRequestBlock, SslRequestBlock } from '../types.js';
import type { Ctx } from './context.js';
import { parseDnsBlock } from './dns.js';
import { extractorNames, parseBlockList } from './host-blocks.js';
import { parseSslBlock } from './ssl.js';

export const HOST_PROTOCOLS = ['dns', 'ssl'] as const;

export function parseHostProtocols(
  ctx: Ctx,
  root: Record<string, unknown>,
  templateVars: ReadonlySet<string>,
  templateStop: boolean,
  hasHttp: boolean,
): { dns?: DnsRequestBlock[]; ssl?: SslRequestBlock[] } {
  const present = HOST_PROTOCOLS.filter((p) => root[p] !== undefined && root[p] !== null);
  if (present.length + (hasHttp ? 1 : 0) > 1) {
    ctx.warn(
      `blocks of several protocols (${[...(hasHttp ? ['http'] : []), ...present].join(', ')}) run each on their own target; values do not flow between protocols`,
      [present[0]],
      true,
    );
  }
  const out: { dns?: DnsRequestBlock[]; ssl?: SslRequestBlock[] } = {};
  if (present.includes('dns')) {
    const vars = new Set([...templateVars, ...extractorNames(root.dns)]);
    out.dns = parseBlockList(ctx, 'dns', root.dns, (raw, segs, i) => parseDnsBlock(ctx, raw, segs, i, vars, templateStop));
  }
  if (present.includes('ssl')) {
    const vars = new Set([...templateVars, ...extractorNames(root.ssl)]);
    out.ssl = parseBlockList(ctx, 'ssl', root.ssl, (raw, segs, i) => parseSslBlock(ctx, raw, segs, i, vars, templateStop));
  }
  return out;
}
