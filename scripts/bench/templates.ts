// npm run bench:templates: how many template × host evaluations per second does the native nuclei engine do,
// with request clustering on and off?
//
// One run, loopback only (127.0.0.1), everything in this process:
//  - BENCH_TEMPLATE_HOSTS (default 8) small HTTP servers on their own ports, each a realistic site: a home page,
//    a security.txt, 404 for unknown paths, and one exposure of the default pack (an .env, a server-status page,
//    a robots.txt, a CORS reflection...), so templates match as well as miss;
//  - two workloads, run by the same function the scan pipeline's checks step calls (runTemplatesOnWeb:
//    scope-guarded sender, 4 hosts at once, 4 templates at once per host):
//      1. the default pack (src/modules/templates/pack/*.yaml): its templates mostly ask for different paths,
//         so clustering has little to share;
//      2. the default pack plus BENCH_TEMPLATE_DETECT (default 40) technology-detection templates written here,
//         each one GET of the home page with its own matcher, the shape of most public nuclei templates
//         (technologies/*, *-detect): that is what clustering is for;
//  - per workload one warm-up run per mode, then runs alternating on/off (one each, in turn) for
//    BENCH_TEMPLATE_SECONDS (default 5) per mode: a busy moment of the machine hits both modes alike. The rates
//    use the median run time (robust to a stray slow run); the mean is printed too.
//      3. BENCH_TEMPLATE_COMMUNITY (default 1,000) templates of the public nuclei library's http/ folder, read from
//         ../shared/data's archive (templates-community.ts: the ones that load with no warning, spread over the
//         folders), BENCH_TEMPLATE_COMMUNITY_RUNS (default 2) runs per mode after the warm-up; skipped, saying so,
//         when the archive is absent;
//  - per mode, the process's peak resident memory while it ran (sampled every 50 ms).
// Both modes must report the same findings; a mismatch or a failed request is printed loudly and the exit code is 1
// (for the community workload, template errors are counted and shown, not fatal: some templates ask for what a
// bench site cannot answer).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadPack } from '../../src/modules/templates/pack.js';
import { runTemplatesOnWeb, type TemplateScanResult } from '../../src/scanner/nuclei/run-on-web.js';
import { parseTemplate, type NucleiTemplate } from '../../src/scanner/nuclei/index.js';
import { createScopeGuard, LOOPBACK_NETWORKS, type ScopeGuard, type WebObservation } from '../../src/scanner/index.js';
import { communityArchive, loadCommunityTemplates } from './templates-community.js';

const HOSTS = positiveInt('BENCH_TEMPLATE_HOSTS', 8);
const SECONDS = positiveInt('BENCH_TEMPLATE_SECONDS', 5);
const DETECT = positiveInt('BENCH_TEMPLATE_DETECT', 40);
const COMMUNITY = positiveInt('BENCH_TEMPLATE_COMMUNITY', 1000);
const COMMUNITY_RUNS = positiveInt('BENCH_TEMPLATE_COMMUNITY_RUNS', 2);
/** Hard limit for the whole run, whatever happens. */
const RUN_LIMIT_MS = (SECONDS * 4 + 900) * 1000;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number above 0 (got ${raw})`);
  return value;
}

const out = (line = '') => process.stdout.write(`${line}\n`);

type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const HOME = '<!doctype html><html><head><title>Bench</title></head><body><h1>Bench site</h1></body></html>';
const text =
  (body: string, headers: Record<string, string> = {}): Route =>
  (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain', ...headers }).end(body);

/** One exposure per host, round robin: the pack has work to report, not only to miss. */
const EXPOSURES: Array<Record<string, Route>> = [
  { '/.env': text('APP_KEY=base64:abc\nDB_PASSWORD=secret\n') },
  {
    '/server-status': (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><h1>Apache Server Status for bench</h1><dt>Server Version: Apache/2.4.57</dt></html>'),
  },
  { '/robots.txt': text('User-agent: *\nDisallow: /admin/\n') },
  {
    '/': (req, res) =>
      res
        .writeHead(200, {
          'content-type': 'text/html',
          'access-control-allow-origin': String(req.headers.origin ?? '*'),
          'access-control-allow-credentials': 'true',
        })
        .end(HOME),
  },
  { '/metrics': text('# HELP up Up.\n# TYPE up gauge\nup 1\n') },
  { '/.git/config': text('[core]\n\trepositoryformatversion = 0\n') },
  {
    '/v2/_catalog': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end('{"repositories":["a"]}'),
  },
  { '/crossdomain.xml': text('<cross-domain-policy><allow-access-from domain="*"/></cross-domain-policy>') },
];

async function startSite(index: number): Promise<{ server: http.Server; port: number }> {
  const routes: Record<string, Route> = {
    '/': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(HOME),
    '/.well-known/security.txt': text('Contact: mailto:security@bench.example\n'),
    ...EXPOSURES[index % EXPOSURES.length],
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // Community templates send paths no URL parser accepts (`//x"><img…`): match on the raw path.
      const route = routes[(req.url ?? '/').split('?')[0]!];
      if (route) route(req, res);
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function webOf(port: number): WebObservation {
  const url = `http://127.0.0.1:${port}/`;
  return {
    kind: 'web',
    host: '127.0.0.1',
    address: '127.0.0.1',
    port,
    scheme: 'http',
    url,
    finalUrl: url,
    status: 200,
    headers: {},
    bodyExcerpt: '',
    bodyBytesRead: 0,
    bodyTruncated: false,
    bodySha256: '',
    redirectChain: [],
    technologies: [],
    responseTimeMs: 1,
  };
}

/** A technology-detection template in nuclei's syntax: one GET of the home page, one word matcher. */
function detectionTemplate(index: number): NucleiTemplate {
  const { template, errors } = parseTemplate(`id: bench-detect-${index}
info:
  name: Bench technology ${index}
  author: bench
  severity: info
  tags: tech
http:
  - method: GET
    path:
      - "{{BaseURL}}/"
    matchers:
      - type: word
        part: header
        words:
          - "X-Bench-Tech-${index}"
`);
  if (!template) throw new Error(`detection template ${index}: ${JSON.stringify(errors)}`);
  return template;
}

interface ModeRuns {
  ms: number[];
  /** CPU time of this process (engine and the in-process sites), per run: less sensitive to other load on the machine. */
  cpuMs: number[];
  sent: number;
  saved: number;
  errors: number;
  peakRss: number;
}

/** Samples the resident set every 50 ms while `work` runs; returns its result and the highest sample. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

function fingerprints(result: TemplateScanResult): string {
  return result.findings.map((finding) => finding.fingerprintParts.join(' ')).join('\n');
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Runs one workload in both modes; returns whether everything matched, and prints its table. */
async function workload(
  label: string,
  templates: NucleiTemplate[],
  web: WebObservation[],
  guard: ScopeGuard,
  options: { runs?: number; errorsAreFatal?: boolean } = {},
): Promise<{ ok: boolean; ratio: number }> {
  const fatalErrors = options.errorsAreFatal ?? true;
  const run = (cluster: boolean) =>
    runTemplatesOnWeb(
      templates.map((template) => ({ template })),
      web,
      { guard, cluster, timeoutMs: 5_000 },
    );
  let ok = true;
  const warmOn = await run(true);
  const warmOff = await run(false);
  if (fingerprints(warmOn) !== fingerprints(warmOff) || (fatalErrors && (warmOn.errors.length || warmOff.errors.length))) {
    out(
      `!!! MISMATCH (${label}): on ${warmOn.findings.length} findings / ${warmOn.errors.length} errors, off ${warmOff.findings.length} / ${warmOff.errors.length}`,
    );
    ok = false;
  }
  const fresh = (): ModeRuns => ({ ms: [], cpuMs: [], sent: 0, saved: 0, errors: 0, peakRss: 0 });
  const runs: Record<'on' | 'off', ModeRuns> = { on: fresh(), off: fresh() };
  const spent = { on: 0, off: 0 };
  const more = () => (options.runs ? runs.off.ms.length < options.runs : spent.on < SECONDS * 1000 || spent.off < SECONDS * 1000);
  for (let turn = 0; more(); turn += 1) {
    const mode = turn % 2 === 0 ? 'on' : 'off';
    const started = performance.now();
    const cpu = process.cpuUsage();
    const { result, peak } = await withPeakRss(() => run(mode === 'on'));
    const ms = performance.now() - started;
    runs[mode].peakRss = Math.max(runs[mode].peakRss, peak);
    runs[mode].errors += result.errors.length;
    const used = process.cpuUsage(cpu);
    spent[mode] += ms;
    runs[mode].ms.push(ms);
    runs[mode].cpuMs.push((used.user + used.system) / 1000);
    runs[mode].sent += result.summary.requestsSent;
    runs[mode].saved += result.summary.requestsSaved;
    if (result.errors.length && fatalErrors) {
      out(`!!! ${result.errors.length} template errors in a run (${label}, clustering ${mode}): ${result.errors[0]!.message}`);
      ok = false;
    }
  }

  const perRun = templates.length * web.length;
  const rate = (mode: 'on' | 'off') => perRun / (median(runs[mode].ms) / 1000);
  const rows = (['on', 'off'] as const).map((mode) => {
    const r = runs[mode];
    return [
      `clustering ${mode}`,
      String(r.ms.length),
      median(r.ms).toFixed(1),
      mean(r.ms).toFixed(1),
      median(r.cpuMs).toFixed(1),
      rate(mode).toFixed(0),
      (r.sent / r.ms.length).toFixed(0),
      (r.saved / r.ms.length).toFixed(0),
      (r.sent / r.ms.length / (median(r.ms) / 1000)).toFixed(0),
      (r.errors / r.ms.length).toFixed(0),
      (r.peakRss / 1024 / 1024).toFixed(0),
    ];
  });
  const header = [
    'mode',
    'runs',
    'median ms/run',
    'mean ms/run',
    'CPU ms/run',
    'templates×hosts/s',
    'requests sent/run',
    'saved/run',
    'requests/s',
    'errors/run',
    'peak RSS MiB',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const ratio = rate('on') / rate('off');
  const cpuRatio = median(runs.off.cpuMs) / median(runs.on.cpuMs);
  const fewer = 1 - runs.on.sent / runs.on.ms.length / (runs.off.sent / runs.off.ms.length);
  out();
  out(`${label}: ${templates.length} templates × ${web.length} hosts = ${perRun} evaluations per run; ${warmOn.findings.length} findings per run`);
  out(line(header));
  for (const row of rows) out(line(row));
  out(
    `ratio (clustering on / off): ${ratio.toFixed(2)}× templates×hosts per second (wall clock), ${cpuRatio.toFixed(2)}× per CPU second, ${(fewer * 100).toFixed(0)}% fewer requests`,
  );
  return { ok, ratio };
}

async function main(): Promise<number> {
  const pack = (await loadPack()).map((entry) => entry.template);
  const detection = Array.from({ length: DETECT }, (_, index) => detectionTemplate(index));
  const sites = await Promise.all(Array.from({ length: HOSTS }, (_, index) => startSite(index)));
  const web = sites.map((site) => webOf(site.port));
  const guard = createScopeGuard({ allowedNetworks: LOOPBACK_NETWORKS });
  try {
    out(`templates bench: ${HOSTS} loopback hosts, ${SECONDS} s per mode and workload, alternating runs`);
    out(
      `node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const first = await workload('default pack', pack, web, guard);
    const second = await workload(`default pack + ${DETECT} detection templates`, [...pack, ...detection], web, guard);
    const archive = communityArchive();
    let third: { ok: boolean; ratio: number } | undefined;
    if (archive) {
      const loadStarted = performance.now();
      const community = await loadCommunityTemplates(archive, COMMUNITY);
      out();
      out(
        `community library: ${community.read} http/ templates read from ${archive} in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s, ` +
          `${community.clean} load with no warning, ${community.templates.length} taken (every ${(community.clean / community.templates.length).toFixed(1)}th by path)`,
      );
      third = await workload(
        `${community.templates.length} community templates`,
        community.templates.map((entry) => entry.template),
        web,
        guard,
        { runs: COMMUNITY_RUNS, errorsAreFatal: false },
      );
    } else {
      out();
      out('community library: no archive (../shared/data/nuclei-templates-a64f60e.tar.gz): workload skipped');
    }
    out();
    out(
      `summary: clustering on/off = ${first.ratio.toFixed(2)}× (default pack), ${second.ratio.toFixed(2)}× (default pack + detection templates)` +
        (third ? `, ${third.ratio.toFixed(2)}× (community templates)` : ''),
    );
    return first.ok && second.ok && (third?.ok ?? true) ? 0 : 1;
  } finally {
    await Promise.all(
      sites.map(
        ({ server }) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      ),
    );
  }
}

const limit = setTimeout(() => {
  process.stderr.write(`bench did not finish within ${RUN_LIMIT_MS / 1000} s\n`);
  process.exit(2);
}, RUN_LIMIT_MS);
limit.unref();

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
