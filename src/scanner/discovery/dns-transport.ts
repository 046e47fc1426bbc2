/**
 * DNS on the wire for the discovery client: one question, one answer, with a hard timeout, over UDP
 * (shared sockets, one per address family) or TCP (one connection per question, and zone transfers).
 *
 * Why not dns-socket: it matches answers by message id alone (neither the sender nor the question is
 * checked), so once ids recycle under thousands of questions per second a late answer to a timed-out
 * question can be handed to a newer one; it has no TCP (needed for truncated answers and AXFR), binds
 * IPv4 only unless given a socket, and its retry count is off by one. dns-packet plus dgram is short enough.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type DecodedPacket, type Packet, type RecordType } from 'dns-packet';
import ipaddr from 'ipaddr.js';
import { normalizeHostName } from '../dns.js';
import type { HostRateLimiter } from '../rate-limit.js';
import type { ZoneTransferResult } from './types.js';

export interface NameServer {
  host: string;
  port: number;
  family: 4 | 6;
  /** `host:port` or `[v6]:port`: the rate-limiter key and what error messages name. */
  key: string;
}

/** A decoded answer; `rcode` is dns-packet's string (NOERROR, NXDOMAIN, SERVFAIL ...). */
export type DnsResponse = DecodedPacket & { rcode: string };

export class DnsTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DnsTimeoutError';
  }
}

interface PendingQuestion {
  server: NameServer;
  name: string;
  type: RecordType;
  resolve: (response: DnsResponse) => void;
}

/** Message ids in use per socket: a random free one per question, so answers cannot be confused while in flight. */
const MAX_IDS = 0x10000;
const UDP_RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

/** How a question is asked beyond name and type (the nuclei dns protocol sets all of these). */
export interface QuestionOptions {
  /** Default IN. */
  dnsClass?: string;
  /** Default true. */
  recursionDesired?: boolean;
  authenticatedData?: boolean;
  /** Add an EDNS0 OPT record with this UDP payload size. */
  ednsUdpSize?: number;
}

export function questionPacket(name: string, type: RecordType, recursionDesired: boolean, options: QuestionOptions = {}): Packet {
  let flags = recursionDesired ? dnsPacket.RECURSION_DESIRED : 0;
  if (options.authenticatedData) flags |= dnsPacket.AUTHENTIC_DATA;
  const packet: Packet = { type: 'query', id: 0, flags, questions: [{ name, type, class: (options.dnsClass ?? 'IN') as 'IN' }] };
  if (options.ednsUdpSize)
    packet.additionals = [
      { type: 'OPT', name: '.', udpPayloadSize: options.ednsUdpSize, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] },
    ];
  return packet;
}

export function createUdpTransport(): {
  ask(server: NameServer, name: string, type: RecordType, timeoutMs: number, options?: QuestionOptions): Promise<DnsResponse>;
  close(): void;
} {
  const sockets = new Map<4 | 6, { socket: dgram.Socket; pending: Map<number, PendingQuestion> }>();
  let closed = false;

  function socketFor(family: 4 | 6) {
    let entry = sockets.get(family);
    if (entry) return entry;
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const pending = new Map<number, PendingQuestion>();
    // ICMP errors (port unreachable) surface here on some platforms; the question's own timeout reports them.
    socket.on('error', () => {});
    // Thousands of answers can arrive at once; the default ~200 KB receive buffer drops them. Best effort: the
    // kernel caps it (Linux: net.core.rmem_max), and some systems refuse big sizes outright.
    socket.once('listening', () => {
      try {
        socket.setRecvBufferSize(UDP_RECEIVE_BUFFER_BYTES);
      } catch {}
    });
    socket.on('message', (buffer, peer) => {
      if (buffer.length < 12) return;
      const question = pending.get(buffer.readUInt16BE(0));
      if (!question || peer.port !== question.server.port || !sameAddress(peer.address, question.server.host)) return;
      let response: DnsResponse;
      try {
        response = dnsPacket.decode(buffer) as DnsResponse;
      } catch {
        return; // garbage: keep waiting for a real answer, the timeout bounds it
      }
      const asked = response.questions?.[0];
      if (response.type !== 'response' || !asked || asked.type !== question.type || asked.name.toLowerCase() !== question.name) return;
      pending.delete(response.id!);
      question.resolve(response);
    });
    // Unref'd: an idle client must not keep the process alive; each question's timer does while it waits.
    socket.unref();
    entry = { socket, pending };
    sockets.set(family, entry);
    return entry;
  }

  function ask(server: NameServer, name: string, type: RecordType, timeoutMs: number, options: QuestionOptions = {}): Promise<DnsResponse> {
    if (closed) return Promise.reject(new Error('DNS client is closed'));
    const { socket, pending } = socketFor(server.family);
    if (pending.size >= MAX_IDS / 2) return Promise.reject(new Error('too many DNS questions in flight'));
    let id = randomId();
    while (pending.has(id)) id = randomId();
    const packet = dnsPacket.encode({ ...questionPacket(name, type, options.recursionDesired ?? true, options), id });
    return new Promise<DnsResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new DnsTimeoutError(`${type} ${name}: no answer from ${server.key} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        server,
        name,
        type,
        resolve: (response) => {
          clearTimeout(timer);
          resolve(response);
        },
      });
      socket.send(packet, server.port, server.host, (err) => {
        if (!err || !pending.has(id)) return;
        pending.delete(id);
        clearTimeout(timer);
        reject(new Error(`${type} ${name}: could not send to ${server.key}: ${err.message}`));
      });
    });
  }

  return {
    ask,
    close() {
      closed = true;
      for (const { socket } of sockets.values()) socket.close();
      sockets.clear();
    },
  };
}

/** Reads 2-byte-length-framed DNS messages from a TCP connection (RFC 1035 §4.2.2) until `onMessage` says stop. */
export function exchangeTcp(
  host: string,
  port: number,
  packet: Packet,
  timeoutMs: number,
  onMessage: (message: DnsResponse, bytes: number) => 'more' | 'done',
  what: string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buffered = Buffer.alloc(0);
    let finished = false;
    const finish = (err?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => finish(new DnsTimeoutError(`${what}: no complete answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('connect', () => socket.write(dnsPacket.streamEncode(packet)));
    socket.on('error', (err) => finish(new Error(`${what}: ${err.message}`)));
    socket.on('close', () => finish(new Error(`${what}: connection closed before the answer was complete`)));
    socket.on('data', (chunk) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      while (!finished && buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        let message: DnsResponse;
        try {
          message = dnsPacket.decode(buffered.subarray(2, 2 + length)) as DnsResponse;
        } catch (err) {
          finish(new Error(`${what}: malformed answer (${(err as Error).message})`));
          return;
        }
        buffered = buffered.subarray(2 + length);
        if (message.id !== packet.id) continue; // not ours (cannot happen on a private connection, but costs nothing)
        try {
          if (onMessage(message, length + 2) === 'done') finish();
        } catch (err) {
          finish(err as Error);
        }
      }
    });
  });
}

/** One question over TCP: after a truncated UDP answer (RFC 7766 §5). */
export async function askTcp(server: NameServer, name: string, type: RecordType, timeoutMs: number, options: QuestionOptions = {}): Promise<DnsResponse> {
  const packet = { ...questionPacket(name, type, options.recursionDesired ?? true, options), id: randomId() };
  let answer: DnsResponse | undefined;
  await exchangeTcp(
    server.host,
    server.port,
    packet,
    timeoutMs,
    (message) => {
      answer = message;
      return 'done';
    },
    `${type} ${name} over TCP to ${server.key}`,
  );
  return answer!;
}

export interface ZoneTransferLimits {
  port: number;
  timeoutMs: number;
  maxRecords: number;
  maxBytes: number;
  limiter: HostRateLimiter;
  countQuery: () => void;
}

/**
 * AXFR of `zone` from one server (RFC 5936): the answer is SOA, every record, SOA, in one or more TCP messages.
 * Never throws: a refusal, a timeout or a server that is not authoritative is `ok: false` with the reason.
 */
export async function transferZone(zoneInput: string, server: { name: string; address: string }, limits: ZoneTransferLimits): Promise<ZoneTransferResult> {
  const failed = (zone: string, reason: string): ZoneTransferResult => ({
    zone,
    server: server.name,
    address: server.address,
    ok: false,
    names: [],
    records: 0,
    reason,
  });
  let zone: string;
  try {
    zone = normalizeHostName(zoneInput);
  } catch (err) {
    return failed(zoneInput, (err as Error).message);
  }
  const address = server.address.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(address) || (!address.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(address))) {
    return failed(zone, `"${server.address}" is not an IP address`);
  }
  const packet = { ...questionPacket(zone, 'AXFR', false), id: randomId() };
  const names = new Set<string>();
  let records = 0;
  let bytes = 0;
  let soaSeen = 0;
  const key = address.includes(':') ? `[${address}]:${limits.port}` : `${address}:${limits.port}`;
  try {
    await limits.limiter.run(key, () => {
      limits.countQuery();
      return exchangeTcp(
        address,
        limits.port,
        packet,
        limits.timeoutMs,
        (message, size) => {
          if (message.rcode !== 'NOERROR')
            throw new Error(message.rcode === 'REFUSED' ? 'REFUSED: the server does not allow zone transfers' : `server answered ${message.rcode}`);
          const answers = message.answers ?? [];
          if (soaSeen === 0 && (answers[0]?.type !== 'SOA' || lowerName(answers[0].name) !== zone)) {
            throw new Error(`not authoritative: the answer does not start with the SOA of ${zone}`);
          }
          bytes += size;
          if (bytes > limits.maxBytes) throw new Error(`transfer stopped: larger than ${limits.maxBytes} bytes`);
          for (const answer of answers) {
            const owner = lowerName(answer.name);
            if (answer.type === 'SOA' && owner === zone && ++soaSeen === 2) return 'done'; // the closing SOA
            if (++records > limits.maxRecords) throw new Error(`transfer stopped: larger than ${limits.maxRecords} records`);
            names.add(owner);
          }
          return 'more';
        },
        `AXFR ${zone} from ${server.name} (${key})`,
      );
    });
  } catch (err) {
    return failed(zone, (err as Error).message);
  }
  return { zone, server: server.name, address: server.address, ok: true, names: [...names].sort(), records };
}

function lowerName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

export function randomId(): number {
  return Math.floor(Math.random() * MAX_IDS);
}

/** Answers to an IPv4 socket may come from the IPv4-mapped IPv6 form on dual-stack setups. */
function sameAddress(from: string, expected: string): boolean {
  if (from === expected) return true;
  const strip = (address: string) => address.replace(/^::ffff:/i, '').toLowerCase();
  return strip(from) === strip(expected);
}
