/**
 * The network protocol engine against loopback services: banners, request/response, binary protocols, reads,
 * TLS. Every feature has a case that matches and one that must not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates, type TestCertificates } from '../scanner/helpers.js';
import { bannerHandler, binaryHandler, lineHandler, run, startTcpService, startTlsService, tcpTemplate, type TcpService } from './network-servers.js';

const HOST = '127.0.0.1';
const SSH_BANNER = 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\r\n';
/** A made-up binary protocol: magic + version; the answer carries bytes that are not UTF-8. */
const HELLO = Buffer.from('cafe0001', 'hex');
const HELLO_REPLY = Buffer.from('cafe8001ff00fe4f4b', 'hex');
const BAD_REPLY = Buffer.from('dead', 'hex');

let banner: TcpService;
let redis: TcpService;
let binary: TcpService;
let chunked: TcpService;
let silent: TcpService;
let tlsService: TcpService;
let certs: TestCertificates;

beforeAll(async () => {
  certs = makeCertificates();
  banner = await startTcpService(bannerHandler(SSH_BANNER));
  redis = await startTcpService(lineHandler(undefined, { PING: '+PONG\r\n', INFO: '# Server\r\nredis_version:7.2.4\r\nredis_mode:standalone\r\n' }));
  binary = await startTcpService(binaryHandler(HELLO, HELLO_REPLY, BAD_REPLY));
  // three chunks 250 ms apart, then closes
  chunked = await startTcpService((socket) => {
    ['part-one;', 'part-two;', 'part-three'].forEach((part, i) => {
      setTimeout(() => (i === 2 ? socket.end(part) : socket.write(part)), 250 * i);
    });
  });
  silent = await startTcpService(() => {});
  tlsService = await startTlsService(certs.selfSigned, lineHandler('* OK IMAP4rev1 ready\r\n', { 'a1 CAPABILITY': '* CAPABILITY IMAP4rev1 STARTTLS\r\n' }));
});

afterAll(async () => {
  await Promise.all([banner, redis, binary, chunked, silent, tlsService].map((s) => s?.close()));
  certs?.cleanup();
});

const hostBlock = (rest: string) => `  - host:\n      - "{{Hostname}}"\n${rest}`;

describe('network: banners', () => {
  const sshTemplate = (word: string) =>
    tcpTemplate(
      hostBlock(`    matchers:
      - type: word
        words: ["${word}"]
    extractors:
      - type: regex
        regex: ['SSH-[\\d.]+-([^\\r\\n]+)']
        group: 1
`),
    );

  it('matches and extracts from what the service says first', async () => {
    const out = await run(sshTemplate('OpenSSH'), { host: HOST, port: banner.port });
    expect(out.results).toHaveLength(1);
    expect(out.results[0]).toMatchObject({ matchedUrl: `${HOST}:${banner.port}`, extractedResults: ['OpenSSH_8.9p1 Ubuntu-3ubuntu0.6'], request: '' });
    expect(out.results[0]!.response).toBe(SSH_BANNER);
    expect(out.stats).toMatchObject({ connections: 1, connectionsFailed: 0, templatesRun: 1 });
  });

  it('does not match a banner without the word', async () => {
    const out = await run(sshTemplate('Dropbear'), { host: HOST, port: banner.port });
    expect(out.results).toEqual([]);
    expect(out.stats.connections).toBe(1);
  });
});

describe('network: text inputs, named reads, parts', () => {
  const redisTemplate = (part: string, word: string) =>
    tcpTemplate(
      hostBlock(`    inputs:
      - data: "PING\\r\\n"
        read: 64
        name: ping
      - data: "INFO\\r\\n"
    matchers-condition: and
    matchers:
      - type: word
        part: ping
        words: ["+PONG"]
      - type: word
        part: ${part}
        words: ["${word}"]
    extractors:
      - type: regex
        part: data
        regex: ['redis_version:([\\d.]+)']
        group: 1
`),
    );

  it('writes each input, exposes named reads and matches the final read as data / body', async () => {
    const out = await run(redisTemplate('body', 'redis_version'), { host: HOST, port: redis.port });
    expect(out.results).toHaveLength(1);
    expect(out.results[0]!.extractedResults).toEqual(['7.2.4']);
    expect(out.results[0]!.request).toBe('PING\r\nINFO\r\n');
    expect(redis.received.at(-1)!.toString()).toBe('PING\r\nINFO\r\n');
  });

  it('raw holds every read; data only the final one', async () => {
    expect((await run(redisTemplate('raw', '+PONG'), { host: HOST, port: redis.port })).results).toHaveLength(1);
    expect((await run(redisTemplate('data', '+PONG'), { host: HOST, port: redis.port })).results).toEqual([]);
  });

  it('a named read is a variable for later inputs', async () => {
    const yaml = tcpTemplate(
      hostBlock(`    inputs:
      - data: "PING\\r\\n"
        read: 64
        name: first
      - data: "{{trim_space(replace(first, '+', ''))}}\\r\\n"
    matchers:
      - type: word
        words: ["-ERR unknown"]
`),
    );
    const out = await run(yaml, { host: HOST, port: redis.port });
    expect(out.results).toHaveLength(1);
    expect(redis.received.at(-1)!.toString()).toBe('PING\r\nPONG\r\n');
  });

  it('an input with an unresolved variable is not sent and gives no event', async () => {
    const yaml = tcpTemplate(
      hostBlock(`    inputs:\n      - data: "{{nothing}}\\r\\n"\n    matchers:\n      - type: word\n        negative: true\n        words: ["x"]\n`),
    );
    const before = redis.connections;
    const out = await run(yaml, { host: HOST, port: redis.port });
    expect(out.results).toEqual([]);
    expect(out.warnings.map((w) => w.message).join('\n')).toContain('unresolved {{nothing}}');
    expect(redis.connections - before).toBe(1);
    expect(redis.received.at(-1)!.length).toBe(0);
  });
});

describe('network: hex inputs and binary matchers', () => {
  const binTemplate = (hex: string, needle: string) =>
    tcpTemplate(
      hostBlock(`    inputs:
      - data: ${hex}
        type: hex
    matchers-condition: and
    matchers:
      - type: binary
        binary: ["${needle}"]
      - type: word
        encoding: hex
        words: ["4f4b"]
`),
    );

  it('sends hex data byte-exact (also when YAML would read it as a number) and matches bytes', async () => {
    const out = await run(binTemplate('cafe0001', 'ff00fe'), { host: HOST, port: binary.port });
    expect(binary.received.at(-1)!.equals(HELLO)).toBe(true);
    expect(out.results).toHaveLength(1);
  });

  it('leading zeros of an unquoted hex scalar are kept', async () => {
    const zeros = Buffer.from('00000001', 'hex');
    const svc = await startTcpService(binaryHandler(zeros, HELLO_REPLY, BAD_REPLY));
    try {
      const out = await run(binTemplate('00000001', 'ff00fe'), { host: HOST, port: svc.port });
      expect(svc.received[0]!.equals(zeros)).toBe(true);
      expect(out.results).toHaveLength(1);
    } finally {
      await svc.close();
    }
  });

  it('does not match when the service answers other bytes', async () => {
    const out = await run(binTemplate('cafe0002', 'ff00fe'), { host: HOST, port: binary.port });
    expect(binary.received.at(-1)!.toString('hex')).toBe('cafe0002');
    expect(out.results).toEqual([]);
  });

  it('does not match a needle absent from the answer', async () => {
    expect((await run(binTemplate('cafe0001', 'ff00ff'), { host: HOST, port: binary.port })).results).toEqual([]);
  });

  it('renders DSL helpers in text inputs to raw bytes', async () => {
    const yaml = tcpTemplate(
      hostBlock(
        `    inputs:\n      - data: "{{hex_decode('cafe0001')}}"\n    matchers:\n      - type: dsl\n        dsl: ["hex_encode(data) == 'cafe8001ff00fe4f4b'"]\n`,
      ),
    );
    const out = await run(yaml, { host: HOST, port: binary.port });
    expect(binary.received.at(-1)!.equals(HELLO)).toBe(true);
    expect(out.results).toHaveLength(1);
  });
});

describe('network: read-size, read-all and timeouts', () => {
  const readTemplate = (opts: string, word: string) => tcpTemplate(hostBlock(`${opts}    matchers:\n      - type: word\n        words: ["${word}"]\n`));

  it('read-size bounds the final read', async () => {
    expect((await run(readTemplate('    read-size: 7\n', 'SSH-2.0'), { host: HOST, port: banner.port })).results).toHaveLength(1);
    expect((await run(readTemplate('    read-size: 7\n', 'OpenSSH'), { host: HOST, port: banner.port })).results).toEqual([]);
  });

  it('the final read takes 1024 bytes unless read-size says otherwise', async () => {
    const big = await startTcpService((socket) => socket.write(Buffer.alloc(3000, 0x42)));
    try {
      const lengthIs = (n: number, opts = '') => tcpTemplate(hostBlock(`${opts}    matchers:\n      - type: dsl\n        dsl: ["len(data) == ${n}"]\n`));
      expect((await run(lengthIs(1024), { host: HOST, port: big.port })).results).toHaveLength(1);
      expect((await run(lengthIs(1024, '    read-size: 2048\n'), { host: HOST, port: big.port })).results).toEqual([]);
      expect((await run(lengthIs(2048, '    read-size: 2048\n'), { host: HOST, port: big.port })).results).toHaveLength(1);
    } finally {
      await big.close();
    }
  });

  it('a plain read returns what has arrived; read-all waits for the rest', async () => {
    expect((await run(readTemplate('', 'part-three'), { host: HOST, port: chunked.port })).results).toEqual([]);
    const all = await run(readTemplate('    read-all: true\n', 'part-three'), { host: HOST, port: chunked.port }, { readTimeoutMs: 2000 });
    expect(all.results).toHaveLength(1);
    expect(all.results[0]!.response).toBe('part-one;part-two;part-three');
  });

  it('read-all stops at the byte cap', async () => {
    const flood = await startTcpService((socket) => socket.end(Buffer.alloc(100_000, 0x41)));
    try {
      const yaml = tcpTemplate(hostBlock('    read-all: true\n    matchers:\n      - type: dsl\n        dsl: ["len(data) == 1000"]\n'));
      expect((await run(yaml, { host: HOST, port: flood.port }, { maxReadBytes: 1000, readTimeoutMs: 2000 })).results).toHaveLength(1);
      expect((await run(yaml, { host: HOST, port: flood.port }, { maxReadBytes: 2000, readTimeoutMs: 2000 })).results).toEqual([]);
    } finally {
      await flood.close();
    }
  });

  it('an input read that times out gives no event (not even for a negative matcher)', async () => {
    const yaml = tcpTemplate(
      hostBlock(
        '    inputs:\n      - data: "hello\\r\\n"\n        read: 16\n    matchers:\n      - type: word\n        negative: true\n        words: ["x"]\n',
      ),
    );
    const out = await run(yaml, { host: HOST, port: silent.port }, { readTimeoutMs: 150 });
    expect(out.results).toEqual([]);
    expect(out.stats.connectionsFailed).toBe(1);
    expect(out.warnings.map((w) => w.message).join('\n')).toMatch(/read timed out/);
  });

  it('a final read that times out still matches on earlier reads (as nuclei)', async () => {
    const yaml = tcpTemplate(
      hostBlock('    inputs:\n      - data: "PING\\r\\n"\n        read: 16\n    matchers:\n      - type: word\n        part: raw\n        words: ["+PONG"]\n'),
    );
    const started = Date.now();
    const out = await run(yaml, { host: HOST, port: redis.port }, { readTimeoutMs: 200 });
    expect(out.results).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });
});

describe('network: TLS', () => {
  const imapTemplate = (host: string) =>
    tcpTemplate(
      `  - host:\n      - "${host}"\n    inputs:\n      - data: "a1 CAPABILITY\\r\\n"\n        read: 1024\n    matchers:\n      - type: word\n        part: raw\n        words: ["STARTTLS"]\n`,
    );

  it('tls:// host entries speak TLS (certificate not verified, as nuclei)', async () => {
    const out = await run(imapTemplate('tls://{{Hostname}}'), { host: HOST, port: tlsService.port }, { readTimeoutMs: 1000 });
    expect(out.results).toHaveLength(1);
    expect(tlsService.received.at(-1)!.toString()).toBe('a1 CAPABILITY\r\n');
  });

  it('a plain host entry against a TLS service does not match', async () => {
    const out = await run(imapTemplate('{{Hostname}}'), { host: HOST, port: tlsService.port });
    expect(out.results).toEqual([]);
  });
});
