/**
 * A real authoritative DNS server on loopback for tests and benchmarks: UDP and TCP on the same port,
 * dns-packet on the wire. Zone semantics live in dns-zone.ts (answers, NXDOMAIN vs NODATA, CNAME chains,
 * wildcards); this file is the transport: truncation to TCP for big UDP answers, AXFR over TCP only,
 * REFUSED outside our zones, and test hooks (delays, forced failures, in-flight accounting).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Question } from 'dns-packet';
import { buildZone, lookup, normalizeName, type Rcode, transferMessages, type Zone, type ZoneDefinition } from './dns-zone.js';

export type { ZoneDefinition, ZoneRecord } from './dns-zone.js';

export interface DnsQueryLogEntry {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
}

export interface DnsServerOptions {
  zones: ZoneDefinition[];
  /** Loopback address to bind; `::1` for an IPv6 server. */
  host?: string;
  /** A fixed port for UDP and TCP (benchmarks of tools that only speak to port 53); random when omitted. */
  port?: number;
  /** Answer each query this many ms late (a number, or per query); lets tests observe concurrency and timeouts. */
  delayMs?: number | ((query: DnsQueryLogEntry) => number);
  /** Force an outcome for some queries: an rcode instead of the zone's answer, or `drop` (never answer). */
  override?: (query: DnsQueryLogEntry) => 'SERVFAIL' | 'REFUSED' | 'drop' | undefined;
  /** AXFR records per TCP message (several messages for bigger zones, like real servers). Default 100. */
  transferRecordsPerMessage?: number;
}

export interface TestDnsServer {
  address: string;
  port: number;
  /** `127.0.0.1:port` or `[::1]:port`: the form SCAN_DNS_SERVERS takes. */
  server: string;
  /** Queries received (UDP and TCP). */
  queries(): number;
  /** The first LOG_LIMIT queries, in arrival order. */
  queryLog(): DnsQueryLogEntry[];
  /** Queries received but not answered yet, now and at most so far. */
  inFlight(): number;
  maxInFlight(): number;
  stop(): Promise<void>;
}

/** The log stops growing here so a benchmark of millions of queries does not eat memory; the counter goes on. */
const LOG_LIMIT = 100_000;
/** Classic UDP payload limit without EDNS (RFC 1035 §4.2.1). */
const UDP_LIMIT = 512;
/** Linux caps this at net.core.rmem_max / wmem_max, silently. */
const UDP_BUFFER_BYTES = 4 * 1024 * 1024;
const RCODE_VALUES: Record<Rcode, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };

export async function startDnsServer(options: DnsServerOptions): Promise<TestDnsServer> {
  const zones: Zone[] = options.zones.map(buildZone);
  const host = options.host ?? '127.0.0.1';
  const perMessage = options.transferRecordsPerMessage ?? 100;
  const log: DnsQueryLogEntry[] = [];
  let received = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  function record(question: Question, transport: 'udp' | 'tcp'): DnsQueryLogEntry {
    const entry = entryOf(question, transport);
    received++;
    if (log.length < LOG_LIMIT) log.push(entry);
    return entry;
  }

  /** Encoded replies to one query (several only for AXFR), or [] to stay silent. */
  function reply(query: DecodedPacket, transport: 'udp' | 'tcp'): Buffer[] {
    const question = query.questions?.[0];
    const opcode = (query as { opcode?: string }).opcode;
    if (!question || query.questions!.length !== 1 || query.type !== 'query') {
      received++;
      return [respond(query, 'FORMERR')];
    }
    const entry = record(question, transport);
    if (opcode !== 'QUERY') return [respond(query, 'NOTIMP')];
    const forced = options.override?.(entry);
    if (forced === 'drop') return [];
    if (forced) return [respond(query, forced)];
    if (question.type === 'AXFR') return transfer(query, entry.name, transport);
    if (question.type === 'IXFR') return [respond(query, 'NOTIMP')];
    const result = lookup(zones, entry.name, question.type);
    const message = respond(query, result.rcode, result.authoritative, result.answers, result.authorities);
    // Too big for UDP: send the header and question with TC set, so the client asks again over TCP (RFC 7766).
    if (transport === 'udp' && message.length > udpLimit(query)) return [respond(query, result.rcode, result.authoritative, [], [], true)];
    return [message];
  }

  function transfer(query: DecodedPacket, name: string, transport: 'udp' | 'tcp'): Buffer[] {
    const zone = zones.find((candidate) => candidate.origin === name);
    // AXFR is TCP only (RFC 5936 §4.2); a zone we do not have, or one that is closed, is refused.
    if (transport === 'udp' || !zone || !zone.allowTransfer) return [respond(query, 'REFUSED', Boolean(zone))];
    return transferMessages(zone, perMessage).map((records) => respond(query, 'NOERROR', true, records));
  }

  async function answer(query: DecodedPacket, transport: 'udp' | 'tcp', send: (buffers: Buffer[]) => void): Promise<void> {
    const replies = reply(query, transport);
    if (replies.length === 0) return;
    const question = query.questions?.[0];
    const delay = typeof options.delayMs === 'function' ? (question ? options.delayMs(entryOf(question, transport)) : 0) : options.delayMs;
    if (typeof delay === 'number' && delay > 0) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, delay));
      inFlight--;
    }
    send(replies);
  }

  const connections = new Set<net.Socket>();
  const udp = await bindUdpAndTcp(host, options.port ?? 0, (socket, tcp) => {
    socket.on('message', (buffer, peer) => {
      const query = decode(buffer);
      if (!query) return;
      void answer(query, 'udp', (buffers) => {
        for (const out of buffers) socket.send(out, peer.port, peer.address);
      });
    });
    tcp.on('connection', (connection) => {
      connections.add(connection);
      connection.on('close', () => connections.delete(connection));
      serveTcp(connection, (query, send) => void answer(query, 'tcp', send));
    });
  });

  return {
    address: host,
    port: udp.port,
    server: host.includes(':') ? `[${host}]:${udp.port}` : `${host}:${udp.port}`,
    queries: () => received,
    queryLog: () => [...log],
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    stop: async () => {
      for (const connection of connections) connection.destroy();
      await Promise.all([new Promise<void>((resolve) => udp.socket.close(() => resolve())), new Promise<void>((resolve) => udp.tcp.close(() => resolve()))]);
    },
  };
}

function entryOf(question: Question, transport: 'udp' | 'tcp'): DnsQueryLogEntry {
  return { name: normalizeName(question.name), type: question.type, transport };
}

function respond(query: DecodedPacket, rcode: Rcode, authoritative = false, answers: Answer[] = [], authorities: Answer[] = [], truncated = false): Buffer {
  let flags = RCODE_VALUES[rcode];
  if (authoritative) flags |= dnsPacket.AUTHORITATIVE_ANSWER;
  if (truncated) flags |= dnsPacket.TRUNCATED_RESPONSE;
  // Echo RD like real servers; we never recurse, so RA stays clear.
  flags |= (query.flags ?? 0) & dnsPacket.RECURSION_DESIRED;
  return dnsPacket.encode({ type: 'response', id: query.id, flags, questions: query.questions ?? [], answers, authorities });
}

function udpLimit(query: DecodedPacket): number {
  const opt = query.additionals?.find((record) => record.type === 'OPT') as { udpPayloadSize?: number } | undefined;
  return Math.max(UDP_LIMIT, opt?.udpPayloadSize ?? UDP_LIMIT);
}

function decode(buffer: Buffer): DecodedPacket | undefined {
  try {
    return dnsPacket.decode(buffer);
  } catch {
    return undefined; // garbage gets no answer, as from most servers
  }
}

/** DNS over TCP: each message is preceded by its 2-byte length (RFC 1035 §4.2.2); several queries may share a connection. */
function serveTcp(connection: net.Socket, onQuery: (query: DecodedPacket, send: (buffers: Buffer[]) => void) => void): void {
  let pending = Buffer.alloc(0);
  connection.on('error', () => connection.destroy());
  connection.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const length = pending.readUInt16BE(0);
      const query = decode(pending.subarray(2, 2 + length));
      pending = pending.subarray(2 + length);
      if (!query) {
        connection.destroy();
        return;
      }
      onQuery(query, (buffers) => {
        if (connection.destroyed) return;
        for (const out of buffers) {
          const frame = Buffer.alloc(2 + out.length);
          frame.writeUInt16BE(out.length, 0);
          out.copy(frame, 2);
          connection.write(frame);
        }
      });
    }
  });
}

/** UDP on a random (or the given) port, then TCP on the same port; if another process holds that TCP port, start over. */
async function bindUdpAndTcp(
  host: string,
  fixedPort: number,
  wire: (socket: dgram.Socket, tcp: net.Server) => void,
): Promise<{ socket: dgram.Socket; tcp: net.Server; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < (fixedPort ? 1 : 5); attempt++) {
    // Big buffers: a brute-force client sends thousands of datagrams at once, and the default ~200 KB drops them.
    const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4', recvBufferSize: UDP_BUFFER_BYTES, sendBufferSize: UDP_BUFFER_BYTES });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(fixedPort, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const port = socket.address().port;
    const tcp = net.createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, host, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      lastError = err;
      socket.close();
      continue;
    }
    socket.on('error', () => {}); // ICMP port-unreachable from a vanished client must not crash the test process
    wire(socket, tcp);
    return { socket, tcp, port };
  }
  throw new Error(`could not bind UDP and TCP on one port of ${host}: ${String(lastError)}`);
}
