// npm run bench:discovery: how fast and how complete is the brute-force phase of subdomain discovery,
// next to gobuster and dnsrecon, against the same loopback authoritative DNS server and the same wordlist?
//
// Loopback only. The test DNS server (test/support/dns-server.ts) serves bench.test:
//   - PLANTED names taken from the built-in wordlist (SecLists top 5000), spread over it (A, AAAA-only, and CNAMEs
//     to other planted names);
//   - UNLISTED names that are not in the wordlist (no brute force can find them; they are not in the recall's
//     denominator, they are there so "found everything in the zone" is not the same as "found the planted words");
//   - a wildcard sub-zone *.wild.bench.test, with WILD_REAL real names under it (other addresses).
// Every tool gets the same normalised wordlist (4,989 entries) and is run twice per round: on bench.test (speed,
// recall, false positives) and on wild.bench.test (wildcard false positives: names reported that exist only
// through the wildcard; gobuster with --wildcard, dnsrecon with --iw -f, their wildcard-filtering modes).
// Tools, one uncounted warm-up run of the product, then BENCH_DISCOVERY_RUNS rounds (default 3), order rotated
// every round; medians are reported:
//   (a) the product: discover() with only the brute-force source, maxDepth 1; names/s from report.stats.bruteforce.
//       Twice: "matched" (BENCH_DISCOVERY_THREADS names at once, 2 questions each in flight, no rate limit: the
//       shape of gobuster -t THREADS) and "defaults" (the DNS client's polite per-server limits: 64 in flight,
//       2,000 questions/s; what a scan uses unless SCAN_DNS_* settings say otherwise).
//   (b) gobuster dns (Debian's, v3.5): -r 127.0.0.1:<port> -t THREADS; names/s = words / wall time.
//   (c) dnsrecon -t brt: it cannot be told a port, so it gets a second copy of the server on 127.0.0.1:53 when
//       that port can be bound (root, nothing else on it); otherwise it is skipped, with the reason.
// The DNS servers run in a child process (this file, forked with --serve): in the benchmark's own process they would
// share the product's event loop and slow it down, while the CLI tools run in processes of their own.
import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDnsClient } from '../../src/scanner/discovery/dns-client.js';
import { discover } from '../../src/scanner/discovery/discover.js';
import { createNameScope } from '../../src/scanner/discovery/scope.js';
import { builtinWordlist } from '../../src/scanner/discovery/wordlist.js';
import { startDnsServer, type ZoneRecord } from '../../test/support/dns-server.js';
import { fmt, median, run, table, withTimeout } from './scan-lib.js';

const DOMAIN = 'bench.test';
const WILD_DOMAIN = `wild.${DOMAIN}`;
const WILDCARD_ADDRESS = '10.99.0.1';
const PLANTED = 300;
const WILD_REAL = 20;
const UNLISTED = 50;
const RUNS = positiveInt('BENCH_DISCOVERY_RUNS', 3);
const THREADS = positiveInt('BENCH_DISCOVERY_THREADS', 64);
const RUN_LIMIT_MS = 180_000;

interface Outcome {
  found: string[];
  /** Names tried and the seconds they took (the product's own brute-force phase timer; wall time for the CLIs). */
  tried: number;
  seconds: number;
  wallSeconds: number;
  /** Questions the server received per name tried. */
  questionsPerName: number;
}

/** A DNS server in the child process: where it listens and how many questions it has received. */
interface BenchServer {
  server: string;
  queries(): Promise<number>;
}

interface Tool {
  name: string;
  /** Why it cannot run (missing, port 53 taken); printed instead of results. */
  skipped?: string;
  run(domain: string, wildcard: boolean): Promise<Outcome>;
}

// ---------------------------------------------------------------- the zone

/** Deterministic choice (mulberry32) so every run of the benchmark plants the same names. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function buildZone(words: readonly string[]) {
  const random = seededRandom(20_240_601);
  const pool = words.filter((word) => word !== 'wild' && !word.endsWith('.wild'));
  const pick = (count: number, from: string[]) => {
    const chosen = new Set<string>();
    while (chosen.size < count) chosen.add(from[Math.floor(random() * from.length)]);
    return [...chosen];
  };
  const planted = pick(PLANTED, pool);
  const wildReal = pick(
    WILD_REAL,
    pool.filter((word) => !word.includes('.')),
  );
  const records: ZoneRecord[] = [];
  planted.forEach((word, index) => {
    const address = `10.1.${index >> 8}.${index & 255}`;
    if (index % 10 === 1) records.push({ name: word, type: 'AAAA', data: `2001:db8::${index.toString(16)}` });
    else if (index % 10 === 2) records.push({ name: word, type: 'CNAME', data: `${planted[index - 2]}.${DOMAIN}` });
    else records.push({ name: word, type: 'A', data: address });
  });
  for (let index = 0; index < UNLISTED; index++) records.push({ name: `zq-unlisted-${index}-x7`, type: 'A', data: `10.3.0.${index}` });
  records.push({ name: '*.wild', type: 'A', data: WILDCARD_ADDRESS });
  wildReal.forEach((word, index) => {
    records.push({ name: `${word}.wild`, type: 'A', data: `10.2.0.${index}` });
  });
  const truth = {
    planted: new Set(planted.map((word) => `${word}.${DOMAIN}`)),
    real: new Set([...planted.map((word) => `${word}.${DOMAIN}`), ...Array.from({ length: UNLISTED }, (_, i) => `zq-unlisted-${i}-x7.${DOMAIN}`)]),
    wildReal: new Set(wildReal.map((word) => `${word}.${WILD_DOMAIN}`)),
  };
  return { zone: { origin: DOMAIN, records }, truth };
}

// ---------------------------------------------------------------- the tools

function productTool(name: string, server: BenchServer, words: readonly string[], matched: boolean): Tool {
  return {
    name,
    async run(domain) {
      const dns = createDnsClient(
        matched ? { servers: [server.server], concurrencyPerServer: THREADS * 2, queriesPerSecondPerServer: 1_000_000 } : { servers: [server.server] },
      );
      const before = await server.queries();
      const started = performance.now();
      try {
        const report = await discover(
          {
            domain,
            inScope: createNameScope({ roots: [domain] }).inScope,
            wordlist: words,
            sources: { bruteforce: true, ct: false, dns: false, axfr: false, permutations: false },
            maxDepth: 1,
            maxNames: 100_000,
            maxPermutations: 0,
            ...(matched ? { concurrency: THREADS } : {}),
          },
          { dns },
        );
        const wallSeconds = (performance.now() - started) / 1000;
        const found = report.hosts.filter((host) => host.origins.some((origin) => origin.source === 'bruteforce')).map((host) => host.name);
        const { tried, ms } = report.stats.bruteforce;
        return { found, tried, seconds: ms / 1000, wallSeconds, questionsPerName: ((await server.queries()) - before) / Math.max(1, tried) };
      } finally {
        dns.close();
      }
    },
  };
}

async function cliTool(
  name: string,
  binary: string,
  versionArgs: string[],
  server: BenchServer | string,
  words: number,
  args: (domain: string, wildcard: boolean) => string[],
  parse: (stdout: string) => string[],
): Promise<Tool> {
  const installed = await run(binary, versionArgs, 20_000).catch(() => undefined);
  if (!installed)
    return { name, skipped: `${binary} is not installed (apt-get install gobuster dnsrecon)`, run: async () => Promise.reject(new Error('skipped')) };
  if (typeof server === 'string') return { name, skipped: server, run: async () => Promise.reject(new Error('skipped')) };
  return {
    name: `${name} (v${/\d+\.\d+(\.\d+)?/.exec(installed.stdout || installed.stderr)?.[0] ?? '?'})`,
    async run(domain, wildcard) {
      const before = await server.queries();
      const started = performance.now();
      const result = await run(binary, args(domain, wildcard), RUN_LIMIT_MS);
      const wallSeconds = (performance.now() - started) / 1000;
      if (result.code !== 0) throw new Error(`${binary} exited with ${result.code}: ${result.stderr.trim().slice(-500)}`);
      const found = [...new Set(parse(result.stdout).map((found) => found.toLowerCase().replace(/\.$/, '')))];
      return { found, tried: words, seconds: wallSeconds, wallSeconds, questionsPerName: ((await server.queries()) - before) / words };
    },
  };
}

// ---------------------------------------------------------------- the run

async function main(): Promise<void> {
  const words = builtinWordlist();
  const { truth } = buildZone(words);
  const temp = mkdtempSync(join(tmpdir(), 'perimeter-bench-discovery-'));
  let child: ChildProcess | undefined;
  const cleanup = () => {
    child?.kill();
    rmSync(temp, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const wordlistFile = join(temp, 'wordlist.txt');
    writeFileSync(wordlistFile, `${words.join('\n')}\n`);
    const started = await withTimeout(startServerProcess(), 30_000, 'the DNS server process');
    child = started.child;
    const { server, port53 } = started;

    const tools: Tool[] = [
      productTool(`product, matched (${THREADS} names, ${THREADS * 2} questions in flight)`, server, words, true),
      productTool('product, defaults (64 in flight, 2,000 q/s)', server, words, false),
      await cliTool(
        `gobuster dns -t ${THREADS}`,
        'gobuster',
        ['version'],
        server,
        words.length,
        (domain, wildcard) => [
          'dns',
          '-d',
          domain,
          '-w',
          wordlistFile,
          '-r',
          server.server,
          '-t',
          String(THREADS),
          '-q',
          '--no-color',
          '-z',
          '--timeout',
          '2s',
          ...(wildcard ? ['--wildcard'] : []),
        ],
        (stdout) => [...stdout.matchAll(/Found: (\S+)/g)].map((match) => match[1]),
      ),
      await cliTool(
        `dnsrecon -t brt --threads ${THREADS}`,
        'dnsrecon',
        ['--version'],
        port53,
        words.length,
        (domain, wildcard) => [
          '-d',
          domain,
          '-D',
          wordlistFile,
          '-t',
          'brt',
          '-n',
          '127.0.0.1',
          '--threads',
          String(THREADS),
          '--lifetime',
          '2',
          ...(wildcard ? ['--iw', '-f'] : []),
        ],
        (stdout) => [...stdout.matchAll(/\b(?:A|AAAA|CNAME)\s+(\S+)\s+\S+/g)].map((match) => match[1]),
      ),
    ];
    const runnable = tools.filter((tool) => !tool.skipped);

    console.log(`bench:discovery  node ${process.version}, ${availableParallelism()} CPUs, ${RUNS} rounds, wordlist ${words.length} entries`);
    console.log(
      `zone ${DOMAIN}: ${truth.planted.size} planted wordlist names, ${UNLISTED} names not in the wordlist, *.${WILD_DOMAIN} with ${truth.wildReal.size} real names`,
    );
    for (const tool of tools.filter((candidate) => candidate.skipped)) console.log(`skipped: ${tool.name}: ${tool.skipped}`);

    const results = new Map<Tool, Array<{ plain: Outcome; wild: Outcome }>>(runnable.map((tool) => [tool, []]));
    // Warm-up, not counted: the product's first run in this process would also pay for JIT compilation and
    // module loading, and the server process for its own; the CLI tools start cold every time anyway.
    for (const tool of runnable.filter((candidate) => candidate.name.startsWith('product')))
      await withTimeout(tool.run(DOMAIN, false), RUN_LIMIT_MS, `warm-up ${tool.name}`);
    for (let round = 0; round < RUNS; round++) {
      const order = [...runnable.slice(round % runnable.length), ...runnable.slice(0, round % runnable.length)];
      for (const tool of order) {
        const plain = await withTimeout(tool.run(DOMAIN, false), RUN_LIMIT_MS, `${tool.name} on ${DOMAIN}`);
        const wild = await withTimeout(tool.run(WILD_DOMAIN, true), RUN_LIMIT_MS, `${tool.name} on ${WILD_DOMAIN}`);
        results.get(tool)!.push({ plain, wild });
        console.log(
          `  round ${round + 1}: ${tool.name}: ${fmt(plain.tried / plain.seconds, 0)} names/s, found ${plain.found.length}, wildcard zone found ${wild.found.length}`,
        );
      }
    }

    const rows: string[][] = [];
    const rate = new Map<Tool, number>();
    for (const tool of runnable) {
      const runs = results.get(tool)!;
      const namesPerSecond = median(runs.map((r) => r.plain.tried / r.plain.seconds));
      rate.set(tool, namesPerSecond);
      const recall = median(runs.map((r) => r.plain.found.filter((name) => truth.planted.has(name)).length / truth.planted.size));
      const falsePositives = median(runs.map((r) => r.plain.found.filter((name) => !truth.real.has(name)).length));
      const wildFalse = median(runs.map((r) => r.wild.found.filter((name) => !truth.wildReal.has(name)).length));
      const wildRecall = median(runs.map((r) => r.wild.found.filter((name) => truth.wildReal.has(name)).length / truth.wildReal.size));
      rows.push([
        tool.name,
        fmt(namesPerSecond, 0),
        fmt(median(runs.map((r) => r.plain.wallSeconds)), 2),
        fmt(median(runs.map((r) => r.plain.questionsPerName)), 2),
        `${fmt(recall * 100, 1)}%`,
        fmt(falsePositives, 0),
        fmt(wildFalse, 0),
        `${fmt(wildRecall * 100, 0)}%`,
      ]);
    }
    console.log('');
    console.log(
      table(['tool', 'names/s', 'wall s', 'q/name', 'recall', 'false +', 'wildcard false +', 'wildcard-zone recall'], rows, new Set([1, 2, 3, 4, 5, 6, 7])),
    );
    const gobuster = runnable.find((tool) => tool.name.startsWith('gobuster'));
    if (gobuster) {
      for (const product of runnable.filter((tool) => tool.name.startsWith('product'))) {
        console.log(`ratio ${product.name.split(' (')[0]} / gobuster (names/s): ${fmt(rate.get(product)! / rate.get(gobuster)!, 2)}`);
      }
    }
    console.log('');
    console.log("names/s: the product's brute-force phase timer (report.stats.bruteforce); wall time of the process for the CLI tools");
    console.log('(their start-up and wildcard probe included). recall: planted wordlist names found / planted. false +: names');
    console.log(`reported that are not in the zone. wildcard false +: names under ${WILD_DOMAIN} reported that exist only through the`);
    console.log('wildcard. q/name: questions the server received per word.');
  } finally {
    cleanup();
  }
}

// ---------------------------------------------------------------- the DNS server process

type ServerMessage = { kind: 'ready'; server: string; port53: string | { error: string } } | { kind: 'queries'; id: number; main: number; port53: number };

/** Forks this file with --serve and talks to it over IPC: where the servers listen, and their query counters. */
async function startServerProcess(): Promise<{ child: ChildProcess; server: BenchServer; port53: BenchServer | string }> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, (message: Extract<ServerMessage, { kind: 'queries' }>) => void>();
  let nextId = 0;
  const ready = new Promise<Extract<ServerMessage, { kind: 'ready' }>>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the DNS server process exited (${code})`)));
    child.on('message', (message: ServerMessage) => {
      if (message.kind === 'ready') resolve(message);
      else waiting.get(message.id)?.(message);
    });
  });
  const { server, port53 } = await ready;
  const counter = (which: 'main' | 'port53') => () =>
    new Promise<number>((resolve) => {
      const id = nextId++;
      waiting.set(id, (message) => {
        waiting.delete(id);
        resolve(message[which]);
      });
      child.send({ kind: 'queries', id });
    });
  return {
    child,
    server: { server, queries: counter('main') },
    port53: typeof port53 === 'string' ? { server: port53, queries: counter('port53') } : `port 53 on 127.0.0.1 could not be bound (${port53.error})`,
  };
}

async function serve(): Promise<void> {
  const { zone } = buildZone(builtinWordlist());
  const main = await startDnsServer({ zones: [zone] });
  // dnsrecon only speaks to port 53.
  const port53 = await startDnsServer({ zones: [zone], port: 53 }).catch((err: Error) => ({ error: err.message }));
  process.on('message', (message: { kind: 'queries'; id: number }) => {
    process.send!({ kind: 'queries', id: message.id, main: main.queries(), port53: 'error' in port53 ? 0 : port53.queries() });
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ kind: 'ready', server: main.server, port53: 'error' in port53 ? port53 : port53.server });
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${raw}`);
  return value;
}

(process.argv.includes('--serve') ? serve() : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
