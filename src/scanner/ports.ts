/**
 * TCP connect port scan with banner grab.
 *
 * A full connect (not a SYN scan) needs no privileges and works through the same scope guard as
 * every other connection. Closed ports refuse at once, so the cost is dominated by filtered ports
 * (timeout) and open ones (banner wait), both bounded per connection and overlapped by a worker pool.
 */
import { isUtf8 } from 'node:buffer';
import net from 'node:net';
import type { HostRateLimiter } from './rate-limit.js';
import type { ScopeGuard } from './scope.js';
import type { ServiceObservation } from './types.js';

/**
 * The 100 TCP ports most worth checking on an internet-facing host: classic services plus the
 * admin panels, databases and container/cluster APIs that attack-surface scans most often find exposed.
 */
export const TOP_PORTS: readonly number[] = [
  21, 22, 23, 25, 53, 80, 81, 88, 110, 111, 119, 135, 139, 143, 179, 389, 443, 445, 465, 514, 515, 548, 554, 587, 631, 636, 873, 902, 990, 993, 995, 1025, 1080,
  1194, 1433, 1521, 1723, 1883, 1900, 2049, 2082, 2083, 2086, 2087, 2121, 2181, 2375, 2376, 2379, 3000, 3128, 3306, 3389, 3690, 4443, 4444, 4848, 5000, 5001,
  5060, 5432, 5601, 5672, 5900, 5984, 5985, 5986, 6000, 6379, 6443, 7001, 7443, 8000, 8008, 8009, 8080, 8081, 8088, 8089, 8161, 8443, 8500, 8834, 8888, 9000,
  9001, 9042, 9090, 9092, 9100, 9200, 9300, 9418, 9443, 10000, 10250, 11211, 15672, 27017, 49152,
];

/** Upper bound on one scan's port count, so a typo like `1-65535` on many hosts cannot become a flood. */
export const MAX_PORTS_PER_SCAN = 10_000;

export const DEFAULT_PORT_SCAN = {
  concurrency: 100,
  timeoutMs: 1_500,
  bannerTimeoutMs: 500,
} as const;

/** Longest banner kept; enough for any greeting line, small enough to store per port. */
const MAX_BANNER_BYTES = 512;
/** After the first bytes of a banner arrive, how long to wait for the rest (multi-line SMTP/FTP greetings). */
const BANNER_IDLE_MS = 50;
/** Local resource exhaustion: the port's state is unknown, so the scan must fail rather than report it closed. */
const LOCAL_ERROR_CODES = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'EADDRNOTAVAIL', 'ENOMEM']);

export interface ScanPortsOptions {
  /** IP address to scan (resolve names with the dns step or guard.resolveHost first). */
  address: string;
  ports: readonly number[];
  /** Connections in flight for this scan; the limiter may bound it further per host. */
  concurrency?: number;
  /** Connect timeout per port; an unanswered SYN (filtered port) costs this much. */
  timeoutMs?: number;
  grabBanner?: boolean;
  /** How long to wait for an open port to speak first; capped at timeoutMs. */
  bannerTimeoutMs?: number;
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
}

export class PortScanError extends Error {
  readonly code = 'PORT_SCAN_INCOMPLETE' as const;
}

export async function scanPorts(options: ScanPortsOptions): Promise<ServiceObservation[]> {
  const { address, guard, limiter } = options;
  if (!net.isIP(address)) throw new TypeError(`scanPorts needs an IP address, got "${address}"; resolve the host first`);
  guard.assertAddressAllowed(address); // refuse before the first packet, not port by port
  const ports = [...new Set(options.ports)].sort((a, b) => a - b);
  for (const port of ports) assertPort(port);
  if (ports.length > MAX_PORTS_PER_SCAN) throw new RangeError(`${ports.length} ports requested; at most ${MAX_PORTS_PER_SCAN} per scan`);
  const concurrency = clampInt(options.concurrency ?? DEFAULT_PORT_SCAN.concurrency, 1, 1_000);
  const timeoutMs = clampInt(options.timeoutMs ?? DEFAULT_PORT_SCAN.timeoutMs, 1, 60_000);
  const bannerTimeoutMs = options.grabBanner === false ? 0 : Math.min(timeoutMs, options.bannerTimeoutMs ?? DEFAULT_PORT_SCAN.bannerTimeoutMs);

  const open: ServiceObservation[] = [];
  let next = 0;
  let failure: Error | undefined;
  const worker = async (): Promise<void> => {
    while (next < ports.length && !failure) {
      const port = ports[next++];
      const probe = () => probePort(guard, address, port, timeoutMs, bannerTimeoutMs);
      const outcome = await (limiter ? limiter.run(address, probe) : probe());
      if (outcome.state === 'open') open.push(outcome.service);
      if (outcome.state === 'error') failure ??= outcome.error;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ports.length) }, worker));
  if (failure) {
    throw new PortScanError(`Port scan of ${address} could not finish: ${failure.message}. Lower the concurrency or raise the open-file limit.`, {
      cause: failure,
    });
  }
  return open.sort((a, b) => a.port - b.port);
}

type ProbeOutcome = { state: 'open'; service: ServiceObservation } | { state: 'closed' } | { state: 'error'; error: Error };

function probePort(guard: ScopeGuard, address: string, port: number, timeoutMs: number, bannerTimeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let connected = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let bannerDeadline = 0;

    const socket = net.connect({ ...guard.connectOptions(address), port });
    const finish = (outcome: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const finishOpen = (): void => finish({ state: 'open', service: describeService(address, port, Buffer.concat(chunks, bytes)) });

    timer = setTimeout(() => finish({ state: 'closed' }), timeoutMs); // no answer: filtered
    socket.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      if (bannerTimeoutMs <= 0) return finishOpen();
      bannerDeadline = Date.now() + bannerTimeoutMs;
      timer = setTimeout(finishOpen, bannerTimeoutMs);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= MAX_BANNER_BYTES) return finishOpen();
      clearTimeout(timer);
      timer = setTimeout(finishOpen, Math.max(0, Math.min(BANNER_IDLE_MS, bannerDeadline - Date.now())));
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (connected) return finishOpen(); // reset after accept: still open
      if (err.code && LOCAL_ERROR_CODES.has(err.code)) return finish({ state: 'error', error: err });
      finish({ state: 'closed' }); // ECONNREFUSED, unreachable...
    });
    socket.on('close', () => (connected ? finishOpen() : finish({ state: 'closed' })));
  });
}

function describeService(address: string, port: number, raw: Buffer): ServiceObservation {
  const service: ServiceObservation = { kind: 'service', address, port, transport: 'tcp', open: true };
  const banner = raw.length > 0 ? printableBanner(raw.subarray(0, MAX_BANNER_BYTES)) : undefined;
  if (banner) service.banner = banner;
  const fromBanner = raw.length > 0 ? identifyBanner(raw, port) : undefined;
  const name = fromBanner?.service ?? SERVICE_BY_PORT[port];
  if (name) service.service = name;
  if (fromBanner?.product) service.product = fromBanner.product;
  if (fromBanner?.version) service.version = fromBanner.version;
  return service;
}

/** Text as-is when it is UTF-8, bytes as Latin-1 otherwise; control characters escaped so it stores and prints safely. */
function printableBanner(raw: Buffer): string {
  const text = isUtf8(raw) ? raw.toString('utf8') : raw.toString('latin1');
  return text.replace(/[\r\n]+$/, '').replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

interface BannerIdentity {
  service: string;
  product?: string;
  version?: string;
}

/** Services that greet first and how to recognise them (and, when the greeting says so, product and version). */
export function identifyBanner(raw: Buffer, port: number): BannerIdentity | undefined {
  // MySQL/MariaDB greet with a binary handshake: 3-byte length, sequence 0, protocol 10, then a NUL-terminated version.
  if (raw.length > 6 && raw[3] === 0 && raw[4] === 10) {
    const end = raw.indexOf(0, 5);
    const version = raw.toString('latin1', 5, end === -1 ? Math.min(raw.length, 40) : end);
    if (/^\d+\.\d+/.test(version)) {
      return { service: 'mysql', product: /mariadb/i.test(version) ? 'MariaDB' : 'MySQL', version: version.split('-')[0] };
    }
  }
  const text = raw.toString('latin1');
  const ssh = /^SSH-[\d.]+-([^\s_-]+)(?:[_-]([^\s]+))?/.exec(text);
  if (ssh) return { service: 'ssh', product: ssh[1], version: ssh[2] };
  if (/^220[ -]/.test(text)) {
    const product = /\b(Postfix|Exim|Sendmail|Microsoft ESMTP|vsFTPd|ProFTPD|Pure-FTPd|FileZilla Server)\b(?:[ /]([\d.]+[\w.-]*))?/i.exec(text);
    const isFtp = /FTP/i.test(text) || port === 21 || port === 2121;
    return { service: isFtp && !/SMTP/i.test(text) ? 'ftp' : 'smtp', product: product?.[1], version: product?.[2] };
  }
  if (/^\+OK/.test(text)) return { service: 'pop3' };
  if (/^\* (OK|PREAUTH)/.test(text)) return { service: 'imap' };
  if (/^HTTP\/\d/.test(text)) return { service: 'http' };
  if (/^RFB \d{3}\.\d{3}/.test(text)) return { service: 'vnc' };
  if (/^AMQP/.test(text)) return { service: 'amqp' };
  if (/^-(ERR|NOAUTH|DENIED)/.test(text)) return { service: 'redis' };
  return undefined;
}

/** Conventional assignments; a guess only, a banner overrides it. */
const SERVICE_BY_PORT: Record<number, string> = {
  21: 'ftp',
  22: 'ssh',
  23: 'telnet',
  25: 'smtp',
  53: 'dns',
  80: 'http',
  81: 'http',
  88: 'kerberos',
  110: 'pop3',
  111: 'rpcbind',
  119: 'nntp',
  135: 'msrpc',
  139: 'netbios-ssn',
  143: 'imap',
  179: 'bgp',
  389: 'ldap',
  443: 'https',
  445: 'smb',
  465: 'smtps',
  514: 'shell',
  515: 'printer',
  548: 'afp',
  554: 'rtsp',
  587: 'submission',
  631: 'ipp',
  636: 'ldaps',
  873: 'rsync',
  902: 'vmware-auth',
  990: 'ftps',
  993: 'imaps',
  995: 'pop3s',
  1080: 'socks',
  1194: 'openvpn',
  1433: 'mssql',
  1521: 'oracle',
  1723: 'pptp',
  1883: 'mqtt',
  1900: 'upnp',
  2049: 'nfs',
  2082: 'cpanel',
  2083: 'cpanel-ssl',
  2086: 'whm',
  2087: 'whm-ssl',
  2121: 'ftp',
  2181: 'zookeeper',
  2375: 'docker',
  2376: 'docker-tls',
  2379: 'etcd',
  3000: 'http',
  3128: 'http-proxy',
  3306: 'mysql',
  3389: 'rdp',
  3690: 'svn',
  4443: 'https',
  4848: 'glassfish-admin',
  5000: 'http',
  5001: 'https',
  5060: 'sip',
  5432: 'postgresql',
  5601: 'kibana',
  5672: 'amqp',
  5900: 'vnc',
  5984: 'couchdb',
  5985: 'winrm',
  5986: 'winrm-ssl',
  6000: 'x11',
  6379: 'redis',
  6443: 'kubernetes-api',
  7001: 'weblogic',
  7443: 'https',
  8000: 'http',
  8008: 'http',
  8009: 'ajp13',
  8080: 'http',
  8081: 'http',
  8088: 'http',
  8089: 'splunkd',
  8161: 'activemq-admin',
  8443: 'https',
  8500: 'consul',
  8834: 'nessus',
  8888: 'http',
  9000: 'http',
  9001: 'http',
  9042: 'cassandra',
  9090: 'http',
  9092: 'kafka',
  9100: 'jetdirect',
  9200: 'elasticsearch',
  9300: 'elasticsearch-transport',
  9418: 'git',
  9443: 'https',
  10000: 'webmin',
  10250: 'kubelet',
  11211: 'memcached',
  15672: 'rabbitmq-management',
  27017: 'mongodb',
};

/**
 * Parses `80,443,8000-8100` into sorted unique ports. Ranges are inclusive; whitespace is ignored.
 * Throws with the offending token named, so a bad job input fails with a message a person can act on.
 */
export function parsePortSpec(spec: string, maxPorts = MAX_PORTS_PER_SCAN): number[] {
  const ports = new Set<number>();
  const tokens = spec
    .split(',')
    .map((token) => token.trim())
    .filter(Boolean);
  if (tokens.length === 0) throw new Error('Port spec is empty; expected e.g. "80,443,8000-8100"');
  for (const token of tokens) {
    const match = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(token);
    if (!match) throw new Error(`Invalid port spec entry "${token}": expected a port (443) or a range (8000-8100)`);
    const start = Number(match[1]);
    const end = match[2] === undefined ? start : Number(match[2]);
    for (const port of [start, end]) {
      if (port < 1 || port > 65_535) throw new Error(`Invalid port ${port} in "${token}": ports must be between 1 and 65535`);
    }
    if (end < start) throw new Error(`Invalid port range "${token}": the start is greater than the end`);
    for (let port = start; port <= end; port++) ports.add(port);
  }
  if (ports.size > maxPorts) throw new Error(`Port spec covers ${ports.size} ports; at most ${maxPorts} are allowed per scan`);
  return [...ports].sort((a, b) => a - b);
}

function assertPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError(`Invalid port ${port}: ports must be integers from 1 to 65535`);
}

function clampInt(value: number, min: number, max: number): number {
  if (!Number.isFinite(value)) return min;
  return Math.min(max, Math.max(min, Math.floor(value)));
}
