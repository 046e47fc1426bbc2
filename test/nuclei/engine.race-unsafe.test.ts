import type http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender } from '../../src/scanner/nuclei/index.js';
import { MAX_RACE_COUNT } from '../../src/scanner/nuclei/engine/race.js';
import { createScopeGuard, LOOPBACK_NETWORKS } from '../../src/scanner/index.js';
import { listen, type Started } from '../scanner/helpers.js';
import { header, run, useEngineServers } from './engine-fixtures.js';
import { startServer, type TestServer } from './server.js';

useEngineServers();

let raceServer: TestServer;
/** Answers `together` only once `expected` requests wait at the same time (a barrier): proof they were in flight at once. */
let waiting: http.ServerResponse[] = [];
let expected = 0;

let rawServer: Started;
const received: Buffer[] = [];

beforeAll(async () => {
  raceServer = await startServer({
    '/race': (_req, res) => {
      waiting.push(res);
      if (waiting.length < expected) return;
      for (const r of waiting) r.writeHead(200, { 'content-type': 'text/plain' }).end('together');
      waiting = [];
    },
  });
  // a bare TCP server: records the bytes as they came, answers with a chunked body
  rawServer = await listen(
    net.createServer((socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        const text = Buffer.concat(chunks).toString('latin1');
        if (!/\n\r?\n/.test(text)) return;
        received.push(Buffer.concat(chunks));
        socket.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Smuggle: seen\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n');
      });
    }),
  );
});
afterAll(async () => {
  await raceServer.close();
  await rawServer.close();
});

describe('race', () => {
  it('sends race_count copies of the first request at once, each answer an event', async () => {
    expected = 5;
    const before = raceServer.log.length;
    const out = await run(
      `${header('race-5')}
http:
  - raw:
      - |
        GET /race HTTP/1.1
        Host: {{Hostname}}

      - |
        GET /never HTTP/1.1
        Host: {{Hostname}}

    race: true
    race_count: 5
    matchers:
      - type: word
        words: ["together"]
`,
      {},
      raceServer.baseUrl,
    );
    expect(raceServer.log.slice(before).map((r) => r.url)).toEqual(Array(5).fill('/race'));
    expect(out.results).toHaveLength(1);
  });

  it('without race_count the block runs as usual (one request per entry)', async () => {
    expected = 1;
    const before = raceServer.log.length;
    await run(
      `${header('race-no-count')}
http:
  - path: ["{{BaseURL}}/race"]
    race: true
    matchers:
      - type: status
        status: [200]
`,
      {},
      raceServer.baseUrl,
    );
    expect(raceServer.log.slice(before).map((r) => r.url)).toEqual(['/race']);
  });

  it(`caps race_count at ${MAX_RACE_COUNT}, with a warning`, async () => {
    expected = MAX_RACE_COUNT;
    const before = raceServer.log.length;
    const out = await run(
      `${header('race-cap')}
http:
  - path: ["{{BaseURL}}/race"]
    race: true
    race_count: 1000
    matchers:
      - type: status
        status: [200]
`,
      {},
      raceServer.baseUrl,
    );
    expect(raceServer.log.length - before).toBe(MAX_RACE_COUNT);
    expect(out.warnings.some((w) => w.message.includes(`race_count 1000 capped at ${MAX_RACE_COUNT}`))).toBe(true);
  });
});

describe('unsafe', () => {
  const smuggle = (id: string) => `${header(id)}
http:
  - raw:
      - |+
        @timeout: 5s
        POST /x?a=1 HTTP/1.1
        Host: {{Hostname}}
        Content-Length: 4
        Content-Length: 11
        Transfer-Encoding : chunked

        0

        G

    unsafe: true
    matchers:
      - type: dsl
        dsl: ['body == "hello world" && x_smuggle == "seen"']
`;

  it('writes the raw request byte for byte (LF lines, duplicate headers), path merged with the target path; reads a chunked answer', async () => {
    const before = received.length;
    const out = await run(smuggle('unsafe-bytes'), {}, `http://127.0.0.1:${rawServer.port}/app`);
    expect(received.slice(before).map((b) => b.toString('latin1'))).toEqual([
      `POST /app/x?a=1 HTTP/1.1\nHost: 127.0.0.1:${rawServer.port}\nContent-Length: 4\nContent-Length: 11\nTransfer-Encoding : chunked\n\n0\n\nG\n\n`,
    ]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].request).toContain('Transfer-Encoding : chunked');
  });

  it('goes through the scope guard: a refused address gets no connection and no result', async () => {
    const before = received.length;
    const refusing = createScopeGuard({ allowedNetworks: [] });
    const send = createNodeHttpSender({ lookup: refusing.guardedLookup });
    const out = await run(smuggle('unsafe-scope'), { send }, `http://127.0.0.1:${rawServer.port}/`);
    send.destroy();
    expect(received.length).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.stats.requestsFailed).toBe(1);
    // the same request through a guard that allows loopback connects
    const allowing = createNodeHttpSender({ lookup: createScopeGuard({ allowedNetworks: LOOPBACK_NETWORKS }).guardedLookup });
    const ok = await run(smuggle('unsafe-allowed'), { send: allowing }, `http://127.0.0.1:${rawServer.port}/`);
    allowing.destroy();
    expect(ok.results).toHaveLength(1);
  });
});
