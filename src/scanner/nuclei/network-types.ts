/**
 * Types of the `network` protocol (legacy key `tcp`): parsed blocks, the injected connector and the runner's
 * options. Kept apart from types.ts so the HTTP types stay readable.
 */
import type { Duplex } from 'node:stream';
import type { BlockPayloads } from './parse/payloads.js';
import type { Condition, Extractor, Matcher, RunWarning, TemplateResult } from './types.js';
import type { OastClient } from './oast.js';

/** One `inputs` entry: data written to the socket, then optionally `read` bytes read back (named or not). */
export interface NetworkInput {
  /** `data` as written in the template; `{{markers}}` are rendered at run time. */
  data: string;
  /** `hex`: the rendered data is hex-decoded to bytes before sending; `text`: sent as its bytes. */
  type: 'text' | 'hex';
  /** Bytes to read after writing (0: no read). */
  read: number;
  /** Name under which the bytes read are exposed to matchers, extractors and later inputs. */
  name?: string;
}

/** A host entry: `{{Hostname}}`, `{{Host}}:{{Port}}`, `tls://{{Hostname}}`... (markers rendered at run time). */
export interface NetworkAddress {
  address: string;
  tls: boolean;
}

export interface NetworkRequestBlock {
  /** e.g. `tcp[0]` or `network[1]`. */
  path: string;
  index: number;
  id?: string;
  addresses: NetworkAddress[];
  /** Ports of `port:` (de-duplicated, service names resolved); empty: the target's port is used. */
  ports: number[];
  /** `exclude-ports`: replaces the reserved ports (80, 443, 8080, 8443, 8081, 53) a URL input may override. */
  excludePorts: number[];
  inputs: NetworkInput[];
  /** Bytes of the final read (nuclei `read-size`, default 1024). */
  readSize: number;
  /** Read until the peer closes or stops sending (bounded by the runner's byte cap). */
  readAll: boolean;
  stopAtFirstMatch: boolean;
  matchersCondition: Condition;
  matchers: Matcher[];
  extractors: Extractor[];
  /** `payloads` / `attack`: one connection per combination (nuclei executeRequestWithPayloads). */
  payloads?: BlockPayloads;
  /** When set the block is not run (interactsh, unknown helpers...); a warning was emitted. */
  skip?: string;
}

/** What the runner asks the connector for. `host` is a name or an IP literal (no brackets). */
export interface NetworkConnectRequest {
  host: string;
  port: number;
  /** Wrap the TCP connection in TLS (certificate not verified, as nuclei). */
  tls: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Opens a connection; the caller's scope guard belongs here (e.g. a guarded `lookup` for net.connect), so it runs
 * at connect time. Resolves once connected (and the TLS handshake is done); rejects on refusal or timeout.
 */
export type NetworkConnector = (req: NetworkConnectRequest) => Promise<Duplex>;

/**
 * The target of a network run, as nuclei's input. With `port` and no `scheme` it is nuclei's `host:port`: that
 * port is used whatever the template's `port:` says. Without `port` the template's ports are used (several are
 * probed first). With a `scheme` (the target came from a URL such as http://host:8080) the port counts as implied
 * by the scheme: a reserved one (80, 443, 8080, 8443, 8081, 53, or the block's `exclude-ports`) is replaced by the
 * template's port.
 */
export interface NetworkTarget {
  /** Name or IP literal (IPv6 without brackets). */
  host: string;
  port?: number;
  scheme?: string;
}

export interface NetworkRunStats {
  /** Connections opened to run inputs (probes of multi-port templates not included). */
  connections: number;
  /** Connections that failed (refused, timeout, scope guard, TLS...) or broke while writing / reading inputs. */
  connectionsFailed: number;
  templatesRun: number;
  templatesSkipped: number;
}

export interface NetworkRunDeps {
  connect: NetworkConnector;
  /** Connect timeout (nuclei `-timeout`). Default 10 000 ms. */
  timeoutMs?: number;
  /** Per-read timeout (nuclei's TCP read timeout). Default 5 000 ms. */
  readTimeoutMs?: number;
  /** Cap on the bytes read from one connection, over all reads. Default 1 MiB. */
  maxReadBytes?: number;
  /** Upper bound of connections one template may open (probes included). Default 50. */
  maxConnectionsPerTemplate?: number;
  /** Per-probe connect/read timeout of `jarm()` fingerprints (ten probes, one after the other). Default 10 000 ms (nuclei's). */
  jarmTimeoutMs?: number;
  /** Templates run concurrently. Default 4. */
  concurrency?: number;
  /** Allow host entries naming another host than the target's. Default false: skipped with a warning. */
  allowOffTargetHosts?: boolean;
  stats?: NetworkRunStats;
  onWarning?: (warning: RunWarning) => void;
  signal?: AbortSignal;
  /** `{{interactsh-url}}` values and their interactions (src/oast). Without it templates using OAST are skipped. */
  oast?: OastClient;
  /** How long a connection that carried an OAST URL waits for interactions. Default 5 000 ms. */
  oastCooldownMs?: number;
}

export interface NetworkRunOutput {
  results: TemplateResult[];
  warnings: RunWarning[];
  stats: NetworkRunStats;
}
