/**
 * The pieces of a network run that are nuclei data shapes: target variables of an address, the `port:` rules
 * (UseNetworkPort), the DSL part mapping, and result events (MakeDefaultResultEvent).
 */
import { dslToString, type DslScope } from '../dsl/index.js';
import type { NetworkRunStats, NetworkTarget } from '../network-types.js';
import type { NucleiTemplate, TemplateResult } from '../types.js';
import { joinHostPort, splitHostPort } from './network-io.js';
import type { OperatorResult } from './operators.js';
import { resultEvents, type EventText } from './result-event.js';

/** Ports nuclei treats as implied by an http(s)/dns input, replaced by the template's port (contextargs). */
export const RESERVED_PORTS = [80, 443, 8080, 8443, 8081, 53];

/**
 * nuclei's UseNetworkPort: the input (`host`, `host:port` or `scheme://host:port`) a template port applies to.
 * A bare `host:port` is the operator's choice and kept; a port implied by a URL scheme is replaced when it is
 * reserved (or listed in `exclude-ports`, which replaces the reserved list).
 */
export function networkInput(target: NetworkTarget, templatePort: number | undefined, excludePorts: number[]): string {
  const withScheme = (hostPort: string) => (target.scheme ? `${target.scheme}://${hostPort}` : hostPort);
  if (target.port === undefined)
    return templatePort === undefined ? withScheme(target.host.includes(':') ? `[${target.host}]` : target.host) : joinHostPort(target.host, templatePort);
  if (templatePort !== undefined && target.scheme) {
    const ignored = excludePorts.length ? excludePorts : RESERVED_PORTS;
    if (ignored.includes(target.port)) return joinHostPort(target.host, templatePort);
  }
  return withScheme(joinHostPort(target.host, target.port));
}

/** nuclei's getAddress: the input without its scheme. */
export function inputAddress(input: string): string {
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(input);
  return m ? m[1]! : input;
}

/** Target variables of an address (`host:port` or `host`), as GenerateVariables gives them to network requests. */
export function addressVariables(address: string): Record<string, string> {
  const split = splitHostPort(address);
  const host = split?.host ?? address.replace(/^\[(.*)\]$/, '$1');
  return {
    BaseURL: address,
    RootURL: address,
    Hostname: address,
    Host: host,
    Port: split ? String(split.port) : '',
    Path: '',
    File: '',
    Query: '',
    Scheme: '',
    Input: address,
    FQDN: host,
  };
}

/** nuclei's network getMatchPart: `body`, `all` and no part mean `data`; any other part is looked up as named. */
export function networkPart(part: string, scope: DslScope): string | undefined {
  const key = part === '' || part === 'body' || part === 'all' ? 'data' : part;
  const v = scope.get(key);
  return v === undefined ? undefined : dslToString(v);
}

/** What a network event shows (the shape every protocol's event has). */
export type NetworkEventText = EventText;

/** nuclei MakeDefaultResultEvent for one network event: per named matcher (or), else per named extractor, else one. */
export function networkResults(tpl: NucleiTemplate, hasMatchers: boolean, op: OperatorResult, text: NetworkEventText): TemplateResult[] {
  if (op.dynamicValues.size && !op.matched) return [];
  const extracted = op.extracts.size > 0 || op.outputExtracts.length > 0;
  if (extracted && hasMatchers && !op.matched) return [];
  if (!op.matched && !extracted) return [];
  return resultEvents(tpl, op, text);
}

export function createNetworkRunStats(): NetworkRunStats {
  return { connections: 0, connectionsFailed: 0, templatesRun: 0, templatesSkipped: 0 };
}

/** Ports a template's network blocks name (`port:`), for callers choosing which open ports to run it on. */
export function networkTemplatePorts(template: NucleiTemplate): number[] {
  return [...new Set((template.network ?? []).flatMap((b) => b.ports))];
}

/** An input's `type: hex` data as bytes; undefined when it is not hex (trimmed first, as nuclei). */
export function hexBytes(text: string): Buffer | undefined {
  const clean = text.trim();
  return clean.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(clean) ? Buffer.from(clean, 'hex') : undefined;
}
