/**
 * The self-hosted OAST service (nuclei's interactsh, our own): HTTP and DNS listeners for OAST_DOMAIN in the API
 * process. Scan steps (in this process or in `npm run worker` processes) register their correlation id over
 * pub/sub; the listeners publish each interaction of a registered id on `oast:interaction` under that id.
 *
 * To receive callbacks from the internet, delegate OAST_DOMAIN to this host (an NS record pointing at a name whose
 * A record is this host's public address, OAST_PUBLIC_IP) and expose port 53 (UDP and TCP) and 80, for instance by
 * forwarding them to OAST_DNS_PORT / OAST_HTTP_PORT.
 *
 * Interaction contents (raw requests may hold anything a target sends) are never logged above debug level.
 */
import type { Env } from '../env.js';
import type { Logger } from '../logger.js';
import type { PubSub } from '../pubsub.js';
import type { OastInteraction } from '../scanner/nuclei/oast.js';
import { startOastDnsListener } from './dns-listener.js';
import { startOastHttpListener, type RecordInteraction } from './http-listener.js';
import { OastRegistry, isCorrelationId } from './registry.js';

/** What a recorded interaction keeps of a raw request or response. */
const MAX_RAW_CHARS = 16 * 1024;

export interface OastService {
  registry: OastRegistry;
  httpPort: number;
  dnsPort: number;
  stop(): Promise<void>;
}

export type OastSettings = Pick<
  Env,
  'OAST_LISTEN_HOST' | 'OAST_HTTP_PORT' | 'OAST_DNS_PORT' | 'OAST_PUBLIC_IP' | 'OAST_EVICTION_SECONDS' | 'OAST_MAX_INTERACTIONS_PER_ID'
> & { OAST_DOMAIN: string };

/** Services started in this process and not stopped (main.ts starts one; tests may start theirs). */
let running = 0;

/** Whether this process runs OAST listeners: without Redis, only its own scan steps can reach them. */
export function oastServiceRunning(): boolean {
  return running > 0;
}

function bounded(text: string): string {
  return text.length > MAX_RAW_CHARS ? `${text.slice(0, MAX_RAW_CHARS)}…` : text;
}

export async function startOastService(options: { env: OastSettings; pubsub: PubSub; log: Logger }): Promise<OastService> {
  const { env, pubsub } = options;
  const log = options.log.child({ component: 'oast' });
  const registry = new OastRegistry({
    domain: env.OAST_DOMAIN,
    maxInteractionsPerId: env.OAST_MAX_INTERACTIONS_PER_ID,
    idleMs: env.OAST_EVICTION_SECONDS * 1000,
  });
  const registrations = pubsub.subscribe('oast:registration');
  void (async () => {
    for await (const message of registrations) {
      if (!isCorrelationId(message?.correlationId)) continue;
      if (message.active) registry.register(message.correlationId);
      else registry.deregister(message.correlationId);
    }
  })().catch((err: unknown) => log.error({ err }, 'OAST registrations stopped'));

  let dropped = 0;
  const record: RecordInteraction = (match, seen) => {
    if (!registry.take(match.correlationId)) {
      dropped += 1;
      // once per power of two: a flood is visible without a line per packet
      if ((dropped & (dropped - 1)) === 0) log.warn({ dropped }, 'OAST interactions dropped: an id reached OAST_MAX_INTERACTIONS_PER_ID');
      return;
    }
    const interaction: OastInteraction = {
      ...seen,
      uniqueId: match.uniqueId,
      fullId: match.fullId,
      rawRequest: bounded(seen.rawRequest),
      rawResponse: bounded(seen.rawResponse),
      timestamp: new Date().toISOString(),
    };
    log.debug({ protocol: interaction.protocol, uniqueId: interaction.uniqueId, remote: interaction.remoteAddress }, 'OAST interaction');
    pubsub.publish('oast:interaction', match.correlationId, interaction);
  };

  const host = env.OAST_LISTEN_HOST;
  const http = await startOastHttpListener({ registry, record, host, port: env.OAST_HTTP_PORT });
  let dns: Awaited<ReturnType<typeof startOastDnsListener>>;
  try {
    dns = await startOastDnsListener({ registry, record, host, port: env.OAST_DNS_PORT, publicIp: env.OAST_PUBLIC_IP ?? '127.0.0.1' });
  } catch (err) {
    await http.close();
    throw err;
  }
  log.info({ domain: registry.domain, host, httpPort: http.port, dnsPort: dns.port }, 'OAST listeners ready');
  running += 1;
  let stopped = false;
  return {
    registry,
    httpPort: http.port,
    dnsPort: dns.port,
    stop: async () => {
      if (stopped) return;
      running -= 1;
      stopped = true;
      await registrations.return?.();
      await Promise.all([http.close(), dns.close()]);
    },
  };
}
