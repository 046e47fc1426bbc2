/**
 * OAST in a template run, as nuclei's pkg/protocols/common/interactsh does it:
 *  - every request gets its own URL, minted the first time one of its `{{interactsh-url}}` markers is rendered;
 *    repeated markers of that request (and template variables using it) have the same value
 *  - the request's event is evaluated at once as usual (interactsh_* parts are absent then, so matchers on them
 *    do not match), then again for each interaction its URL receives within the cooldown, with
 *    `interactsh_protocol`, `interactsh_request`, `interactsh_response` and `interactsh_ip` added; the first
 *    interaction that matches gives the result (nuclei's AlreadyMatched), later ones are not evaluated
 *  - waits run alongside the block's later requests: the block ends when its last wait does
 */
import { renderMarkers, type DslRecord, type DslScope, type DslValue } from '../dsl/index.js';
import { OAST_URL_VARIABLE, extractorUsesOast, matcherUsesOast, textUsesOast, type OastClient, type OastInteraction } from '../oast.js';
import type { HttpRequestBlock, NucleiTemplate } from '../types.js';
import type { NetworkRequestBlock } from '../network-types.js';
import { markerVariables } from '../parse/dsl.js';

/** nuclei's interactions-cooldown-period. */
export const DEFAULT_OAST_COOLDOWN_MS = 5_000;

/** The URL of one request: minted on first use. */
export class RequestOast {
  private url?: string;

  constructor(private readonly client: OastClient | undefined) {}

  /** The scope layer answering `interactsh-url`. */
  readonly layer: DslScope = {
    get: (name: string) => {
      if (name !== OAST_URL_VARIABLE || !this.client) return undefined;
      this.url ??= this.client.newUrl();
      return this.url;
    },
  };

  /** The URLs the request was built with (none when it used no marker). */
  get urls(): string[] {
    return this.url ? [this.url] : [];
  }
}

/**
 * Template variables to render once per request because they use `{{interactsh-url}}`, directly or through
 * another such variable (nuclei evaluates variables per request; the others keep one value for the run).
 */
export function perRequestVariables(template: NucleiTemplate): Set<string> {
  const names = new Set<string>();
  for (let progress = true; progress; ) {
    progress = false;
    for (const [name, value] of template.variables) {
      if (names.has(name)) continue;
      if (textUsesOast(value) || markerVariables(value).some((used) => names.has(used))) {
        names.add(name);
        progress = true;
      }
    }
  }
  return names;
}

/**
 * One request's values of the per-request variables: rendered (in declaration order, repeated while one uses
 * another declared after it) in the scope `scopeWith` builds over the values found so far.
 */
export function renderRequestVariables(template: NucleiTemplate, names: ReadonlySet<string>, scopeWith: (found: DslRecord) => DslScope): DslRecord {
  const found = Object.create(null) as DslRecord;
  for (let progress = names.size > 0; progress; ) {
    progress = false;
    for (const [name, raw] of template.variables) {
      if (!names.has(name) || Object.hasOwn(found, name)) continue;
      const r = renderMarkers(raw, scopeWith(found));
      if (r.unresolved.length || r.errors.length) continue;
      found[name] = r.text;
      progress = true;
    }
  }
  return found;
}

/** Whether the block's operators read interactions (and so wait for them after a request that carried a URL). */
export function blockReadsOast(block: Pick<HttpRequestBlock | NetworkRequestBlock, 'matchers' | 'extractors'>): boolean {
  return block.matchers.some(matcherUsesOast) || block.extractors.some(extractorUsesOast);
}

/** nuclei's event fields for one interaction (interactsh_ip is the peer's address), and the request's URL. */
export function interactionData(interaction: OastInteraction, url: string): Record<string, DslValue> {
  return {
    interactsh_protocol: interaction.protocol,
    interactsh_request: interaction.rawRequest,
    interactsh_response: interaction.rawResponse,
    interactsh_ip: interaction.remoteAddress,
    [OAST_URL_VARIABLE]: url,
  };
}

/** What a runner passes on from its deps. */
export interface OastRunDeps {
  oast?: OastClient;
  oastCooldownMs?: number;
  signal?: AbortSignal;
}

/**
 * After a request's own evaluation: when it carried an OAST URL and the block reads interactions, waits the
 * cooldown, then hands each interaction's fields to `evaluate` in arrival order until one matches (true). A
 * failed wait gives no interaction (and so no result), never a template failure.
 */
export async function evaluateInteractions(
  request: RequestOast,
  block: Pick<HttpRequestBlock | NetworkRequestBlock, 'matchers' | 'extractors'>,
  deps: OastRunDeps,
  evaluate: (fields: Record<string, DslValue>) => boolean,
  warn: (message: string) => void,
): Promise<boolean> {
  const [url] = request.urls;
  if (!deps.oast || !url || !blockReadsOast(block)) return false;
  let interactions: OastInteraction[];
  try {
    interactions = await deps.oast.interactions(request.urls, { cooldownMs: deps.oastCooldownMs ?? DEFAULT_OAST_COOLDOWN_MS, signal: deps.signal });
  } catch (err) {
    warn(`waiting for OAST interactions failed: ${(err as Error).message}`);
    return false;
  }
  if (deps.signal?.aborted) return false;
  return interactions.some((interaction) => evaluate(interactionData(interaction, url)));
}
