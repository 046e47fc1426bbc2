/**
 * The OAST DNS listener (UDP and TCP on the same port): authoritative for OAST_DOMAIN. A question for a name under
 * it is answered with OAST_PUBLIC_IP for type A (no record for other types, NOERROR), and recorded when the name
 * carries a registered id; questions for other names are REFUSED; packets that do not decode are dropped.
 * The recorded request and response are the messages' text in the dig / miekg/dns layout nuclei templates see.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Packet, type Question } from 'dns-packet';
import type { OastRegistry } from './registry.js';
import { peerAddress, type OastListener, type RecordInteraction } from './http-listener.js';

const ANSWER_TTL = 60;
/** A TCP client gets this long to send its question. */
const TCP_IDLE_MS = 5_000;
const MAX_TCP_BYTES = 64 * 1024;

function fqdn(name: string): string {
  return name.endsWith('.') ? name : `${name}.`;
}

/** A message as dig prints it (header, question and answer sections). */
export function dnsMessageText(packet: Packet): string {
  const flags = packet.flags ?? 0;
  const names = [
    packet.type === 'response' ? 'qr' : '',
    flags & dnsPacket.AUTHORITATIVE_ANSWER ? 'aa' : '',
    flags & dnsPacket.RECURSION_DESIRED ? 'rd' : '',
  ].filter(Boolean);
  const questions = packet.questions ?? [];
  const answers = packet.answers ?? [];
  const lines = [
    `;; opcode: QUERY, status: ${(packet as DecodedPacket & { rcode?: string }).rcode ?? 'NOERROR'}, id: ${packet.id ?? 0}`,
    `;; flags: ${names.join(' ')}; QUERY: ${questions.length}, ANSWER: ${answers.length}, AUTHORITY: 0, ADDITIONAL: 0`,
    '',
    ';; QUESTION SECTION:',
    ...questions.map((q) => `;${fqdn(q.name)}\t${q.class ?? 'IN'}\t ${q.type}`),
  ];
  if (answers.length) {
    lines.push('', ';; ANSWER SECTION:');
    for (const a of answers) lines.push(`${fqdn(a.name)}\t${(a as { ttl?: number }).ttl ?? 0}\tIN\t${a.type}\t${String((a as { data?: unknown }).data)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The answer to one query, and the interactions it makes; undefined when the packet is no query we answer. */
function answer(registry: OastRegistry, publicIp: string, query: Buffer, remote: string, record: RecordInteraction): Buffer | undefined {
  let packet: DecodedPacket;
  try {
    packet = dnsPacket.decode(query);
  } catch {
    return undefined;
  }
  if (packet.type !== 'query' || !packet.questions?.length) return undefined;
  const questions: Question[] = packet.questions.slice(0, 1);
  const question = questions[0];
  const covered = registry.covers(question.name);
  const answers: Answer[] = covered && question.type === 'A' ? [{ name: question.name, type: 'A', class: 'IN', ttl: ANSWER_TTL, data: publicIp }] : [];
  const response: Packet & { rcode: string } = {
    id: packet.id,
    type: 'response',
    flags: (covered ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | ((packet.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | (covered ? 0 : 5),
    rcode: covered ? 'NOERROR' : 'REFUSED',
    questions,
    answers,
  };
  const match = covered ? registry.match(question.name) : undefined;
  if (match) {
    record(match, {
      protocol: 'dns',
      qType: question.type,
      rawRequest: dnsMessageText(packet),
      rawResponse: dnsMessageText(response),
      remoteAddress: remote,
    });
  }
  return dnsPacket.encode(response);
}

export async function startOastDnsListener(options: {
  registry: OastRegistry;
  record: RecordInteraction;
  host: string;
  port: number;
  publicIp: string;
}): Promise<OastListener> {
  const { registry, record, publicIp } = options;
  const onUdpMessage = (udp: dgram.Socket) => (message: Buffer, rinfo: dgram.RemoteInfo) => {
    const reply = answer(registry, publicIp, message, peerAddress(rinfo.address), record);
    if (reply) udp.send(reply, rinfo.port, rinfo.address);
  };
  // TCP: two-byte length, then the message (RFC 1035 4.2.2); one question per connection is all a callback needs.
  const tcp = net.createServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length > MAX_TCP_BYTES) return socket.destroy();
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        const reply = answer(registry, publicIp, message, peerAddress(socket.remoteAddress), record);
        if (!reply) return socket.destroy();
        const framed = Buffer.alloc(2 + reply.length);
        framed.writeUInt16BE(reply.length, 0);
        reply.copy(framed, 2);
        socket.write(framed);
      }
    });
  });
  // UDP and TCP share one port. Asked for any free port (0), the one UDP got may be taken for TCP by another
  // process meanwhile: then both try again on another.
  for (let attempt = 1; ; attempt++) {
    const udp = dgram.createSocket(net.isIPv6(options.host) ? 'udp6' : 'udp4');
    udp.on('message', onUdpMessage(udp));
    udp.on('error', () => {});
    await listening(udp, (done) => udp.bind(options.port, options.host, done));
    const port = udp.address().port;
    try {
      await listening(tcp, (done) => tcp.listen(port, options.host, done));
    } catch (error) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if (options.port === 0 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 10) continue;
      throw error;
    }
    return {
      port,
      close: async () => {
        await new Promise<void>((resolve) => udp.close(() => resolve()));
        await new Promise<void>((resolve) => tcp.close(() => resolve()));
      },
    };
  }
}

/** Starts `listen` and settles when the socket listens, or rejects with its error. */
function listening(socket: dgram.Socket | net.Server, listen: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    listen(() => {
      socket.off('error', reject);
      resolve();
    });
  });
}
