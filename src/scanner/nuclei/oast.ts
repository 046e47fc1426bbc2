/**
 * OAST (nuclei's interactsh): what the engine needs to know about it, without any listener. The engine gets an
 * `OastClient` (src/oast/client.ts in the server, or the worker bridge in template-worker.ts) as it gets its
 * HttpSender; this file holds the URL format both sides share and the checks of what a template uses.
 *
 * URL format (our own, in interactsh's spirit): the host name `<correlation-id><nonce>.<domain>` where the
 * correlation id is 20 and the nonce 13 characters of [a-z0-9]. `{{interactsh-url}}` is that host name without a
 * scheme, as in nuclei. Listeners match ids case-insensitively (DNS names are case-insensitive, and some targets
 * upper-case what they resolve).
 */
import { randomInt } from 'node:crypto';
import type { Extractor, Matcher, NucleiTemplate } from './types.js';

export const OAST_CORRELATION_ID_LENGTH = 20;
export const OAST_NONCE_LENGTH = 13;
export const OAST_ID_LENGTH = OAST_CORRELATION_ID_LENGTH + OAST_NONCE_LENGTH;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** The marker templates put in what they send. */
export const OAST_URL_VARIABLE = 'interactsh-url';
/** Names an OAST event adds to the response data (nuclei's interactsh_* fields). */
export const OAST_EVENT_FIELDS = ['interactsh_protocol', 'interactsh_request', 'interactsh_response', 'interactsh_ip'] as const;
/** Why a template using OAST is not run when no OAST client is given. */
export const OAST_NOT_CONFIGURED = 'interactsh (OAST) needs OAST_DOMAIN';
/** …and when the listeners (API process) cannot be reached from this process (in-process pub/sub in a worker). */
export const OAST_UNREACHABLE = 'interactsh (OAST) needs REDIS_URL in worker processes to reach the OAST listeners';

/** One interaction seen by an OAST listener (interactsh's server Interaction). */
export interface OastInteraction {
  protocol: 'http' | 'dns';
  /** `<correlation-id><nonce>`, lower case. */
  uniqueId: string;
  /** Every label left of the OAST domain, lower case (`a.b.<uniqueId>`). */
  fullId: string;
  /** DNS question type (`A`, `AAAA`, `TXT`...). */
  qType?: string;
  rawRequest: string;
  rawResponse: string;
  /** The peer's address (nuclei's `interactsh_ip`). */
  remoteAddress: string;
  /** ISO time. */
  timestamp: string;
}

export interface OastClient {
  /** A fresh `<correlation-id><nonce>.<domain>` host name: the value of one request's `{{interactsh-url}}`. */
  newUrl(): string;
  /**
   * The interactions seen for these URLs (host names from newUrl) within `cooldownMs` from now (nuclei's
   * interactions-cooldown-period), oldest first. Resolves early with what arrived when `signal` aborts.
   */
  interactions(urls: readonly string[], options: { cooldownMs: number; signal?: AbortSignal }): Promise<OastInteraction[]>;
}

/** A client whose URLs other threads can mint too (template-worker.ts): it says its domain and correlation id. */
export interface SharedOastClient extends OastClient {
  readonly domain: string;
  readonly correlationId: string;
  /** How long each request waits for interactions. */
  readonly cooldownMs: number;
}

export function randomOastId(length: number): string {
  let id = '';
  for (let i = 0; i < length; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return id;
}

/** `newUrl` for a correlation id on a domain. */
export function oastUrlMinter(domain: string, correlationId: string): () => string {
  const suffix = domain.toLowerCase().replace(/\.$/, '');
  return () => `${correlationId}${randomOastId(OAST_NONCE_LENGTH)}.${suffix}`;
}

/** The unique id (`<correlation-id><nonce>`) of a URL newUrl gave; undefined for anything else. */
export function oastUniqueIdOf(url: string): string | undefined {
  const label = url.toLowerCase().split('.')[0] ?? '';
  return new RegExp(`^[a-z0-9]{${OAST_ID_LENGTH}}$`).test(label) ? label : undefined;
}

const MARKER = /\{\{[^}]*interactsh-url[^}]*\}\}/i;
const FIELD = /\binteractsh_(protocol|request|response|ip)\b/;

/** A matcher that reads interactsh_* (its part or its DSL): it can only be decided once interactions arrive. */
export function matcherUsesOast(m: Pick<Matcher, 'part' | 'dsl'>): boolean {
  return /^interactsh_/.test(m.part) || m.dsl.some((d) => FIELD.test(d.source));
}

/** An extractor reading interactsh_* (its part, a kval name such as `interactsh_ip`, or its DSL). */
export function extractorUsesOast(e: Pick<Extractor, 'part' | 'dsl' | 'kval'>): boolean {
  return /^interactsh_/.test(e.part) || e.kval.some((name) => FIELD.test(name)) || e.dsl.some((d) => FIELD.test(d.source));
}

/** Whether a text (a path, raw request, header, variable value...) asks for an OAST URL. */
export function textUsesOast(text: string): boolean {
  return MARKER.test(text);
}

/** Whether a template needs an OAST client to run as written: it sends `{{interactsh-url}}` or matches on interactions. */
export function templateUsesOast(template: NucleiTemplate): boolean {
  const texts: string[] = template.variables.map(([, value]) => value);
  for (const block of template.requests) texts.push(...block.paths, ...block.raw, ...Object.values(block.headers), block.body ?? '');
  for (const block of template.network ?? []) texts.push(...block.addresses.map((a) => a.address), ...block.inputs.map((input) => input.data));
  for (const block of template.dns ?? []) texts.push(block.name);
  if (texts.some(textUsesOast)) return true;
  const blocks = [...template.requests, ...(template.network ?? []), ...(template.dns ?? [])];
  return blocks.some((block) => block.matchers.some(matcherUsesOast) || block.extractors.some(extractorUsesOast));
}

/** The template as it runs without OAST: skipped with the reason when it needs it (as user-variables.ts does). */
export function withoutOast(template: NucleiTemplate, reason: string = OAST_NOT_CONFIGURED): NucleiTemplate {
  if (template.skip || !templateUsesOast(template)) return template;
  return { ...template, skip: reason };
}
