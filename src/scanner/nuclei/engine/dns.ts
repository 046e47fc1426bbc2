/**
 * Runs the `dns` blocks of nuclei templates against a host name through an injected DnsResolver
 * (nuclei pkg/protocols/dns). Per block: render the question name (FQDN is the input with its trailing dot, as
 * nuclei's dns.Fqdn), ask once (recursion, class, EDNS0 4096, AD on TXT as nuclei), build nuclei's DSL map
 * (responseToDSLMap: rcode, question, answer, ns, extra, raw, request, host, matched, one key per answer type)
 * and run the block's operators on it; `part: body|all` or no part means the whole message (`raw`).
 *
 * An IP address input is refused except for PTR questions, which ask for its reverse name (nuclei parseDNSInput).
 * Resolver failures (no server answered) produce no event, so no matcher runs on an empty answer.
 */
import ipaddr from 'ipaddr.js';
import { dslToString, type DslRecord, type DslScope, type DslValue } from '../dsl/index.js';
import type { DnsRequestBlock, DnsRunDeps, HostTarget, NucleiTemplate, RunOutput, TemplateResult } from '../types.js';
import { messageString, questionString, rcodeNumber, recordsKeyValue, recordsString } from './dns-format.js';
import { type HostEvent, type HostProtocol, type HostTemplateRun, renderField, runHostTemplates } from './host-run.js';
import type { PartResolver } from './operators.js';

/** nuclei dns getMatchPart: body / all / nothing → raw; otherwise the key itself. */
export const dnsPart: PartResolver = (part: string, scope: DslScope) => {
  const key = part === '' || part === 'body' || part === 'all' ? 'raw' : part;
  const v = scope.get(key);
  return v === undefined ? undefined : dslToString(v);
};

function reverseName(ip: string): string {
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return `${parsed.toByteArray().reverse().join('.')}.in-addr.arpa.`;
  const nibbles = parsed.toByteArray().flatMap((b) => [(b >> 4).toString(16), (b & 15).toString(16)]);
  return `${nibbles.reverse().join('.')}.ip6.arpa.`;
}

function isIp(host: string): boolean {
  return ipaddr.isValid(host) && (host.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(host));
}

/** The host as a DNS input: name with trailing dot, `undefined` when it cannot be one. */
function dnsInput(host: string): string | undefined {
  const h = host.trim().replace(/^\[(.*)\]$/, '$1');
  if (h === '' || isIp(h)) return undefined;
  return h.endsWith('.') ? h : `${h}.`;
}

function executor(target: HostTarget, deps: DnsRunDeps) {
  const host = target.host.trim().replace(/^\[(.*)\]$/, '$1');
  return async (block: DnsRequestBlock, scope: DslScope, run: HostTemplateRun<DnsRequestBlock>): Promise<HostEvent | undefined> => {
    let domain: string;
    if (isIp(host)) {
      if (block.type !== 'PTR') {
        run.warn('cannot use an IP address as DNS input (only PTR questions take one)', block.path);
        return undefined;
      }
      domain = reverseName(host);
    } else domain = dnsInput(host) ?? '';
    // FQDN is the PTR name for IP inputs, as nuclei's GenerateDNSVariables(domain)
    const blockScope: DslScope = { get: (name) => (name === 'FQDN' ? domain : scope.get(name)) };
    const rendered = renderField(block.name, blockScope, run, `${block.path}.name`);
    if (rendered === undefined) return undefined;
    const name = rendered.replace(/\.$/, '');
    if (name === '') {
      run.warn('request not sent: empty question name', `${block.path}.name`);
      return undefined;
    }
    run.stats.requestsSent++;
    let exchanged: Awaited<ReturnType<DnsRunDeps['resolver']['exchange']>>;
    try {
      exchanged = await deps.resolver.exchange({
        name,
        type: block.type,
        class: block.class,
        recursionDesired: block.recursion,
        authenticatedData: block.type === 'TXT',
        retries: block.retries,
        timeoutMs: deps.timeoutMs,
        signal: deps.signal,
      });
    } catch (err) {
      run.stats.requestsFailed++;
      run.warn(`dns ${block.type} ${name} failed: ${(err as Error).message}`, block.path);
      return undefined;
    }
    const { request, response } = exchanged;
    const requestText = messageString({ ...request, id: response.id ?? request.id });
    const raw = messageString(response);
    const matched = name;
    const data: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
    Object.assign(data, recordsKeyValue(response.answers));
    Object.assign(data, {
      host: domain.replace(/\.$/, ''),
      matched,
      request: requestText,
      rcode: rcodeNumber(response.rcode),
      question: questionString(response.questions),
      extra: recordsString(response.additionals),
      answer: recordsString(response.answers),
      ns: recordsString(response.authorities),
      raw,
      'template-id': run.tpl.id,
      type: 'dns',
      trace: '',
    });
    return { data, matched, request: requestText, response: raw };
  };
}

/**
 * Run the dns blocks of `templates` against one host (a name; an IP address only feeds PTR blocks).
 * Templates without dns blocks are ignored.
 */
export async function runDnsTemplatesDetailed(templates: NucleiTemplate[], target: HostTarget, deps: DnsRunDeps): Promise<RunOutput> {
  const { inputVars, execute, readPart } = dnsProtocol(target, deps);
  return runHostTemplates(templates, deps, (t) => t.dns, inputVars, execute, readPart);
}

/** The dns protocol against one host, for runHostTemplates and for flows (engine/flow.ts). */
export function dnsProtocol(target: HostTarget, deps: DnsRunDeps): HostProtocol<DnsRequestBlock> {
  const domain = isIp(target.host.trim().replace(/^\[(.*)\]$/, '$1')) ? '' : (dnsInput(target.host) ?? '');
  const inputVars: DslRecord = { FQDN: domain };
  return { inputVars, execute: executor(target, deps), readPart: dnsPart };
}

export async function runDnsTemplates(templates: NucleiTemplate[], target: HostTarget, deps: DnsRunDeps): Promise<TemplateResult[]> {
  return (await runDnsTemplatesDetailed(templates, target, deps)).results;
}
