// Small helpers for scripts/bench/scan.ts: time limits, statistics, a loopback port range with known open
// ports, nmap (installed on demand, never a product dependency) and plain-text tables.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export const LOOPBACK = '127.0.0.1';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection naming `label` once `ms` have passed (the work itself is not cancelled). */
export function withTimeout<T>(promise: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not finish within ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

export function median(values: readonly number[]): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of already sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Left-aligned text columns, right-aligned columns listed in `right`. */
export function table(header: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------- loopback port range

/** Can we listen on 127.0.0.1:port right now (no one else does, on it or on 0.0.0.0)? */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: LOOPBACK, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The kernel's ephemeral range: a scanned port inside it could self-connect, so the bench avoids it. */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi)) return [lo!, hi!];
  } catch {
    // not Linux: assume the IANA default
  }
  return [49152, 65535];
}

/**
 * A contiguous block of `size` ports on 127.0.0.1, outside the ephemeral range, where nothing listens
 * (checked by binding every one of them).
 */
export async function findFreeBlock(size: number): Promise<{ lo: number; hi: number; ephemeral: [number, number] }> {
  const ephemeral = ephemeralRange();
  const bases: number[] = [];
  for (let base = 20_000; base + size - 1 < 65_536; base += size) {
    const hi = base + size - 1;
    if (hi < ephemeral[0] || base > ephemeral[1]) bases.push(base);
  }
  for (const base of bases) {
    let allFree = true;
    for (let start = base; start < base + size && allFree; start += 100) {
      const batch = Array.from({ length: Math.min(100, base + size - start) }, (_, i) => canBind(start + i));
      allFree = (await Promise.all(batch)).every(Boolean);
    }
    if (allFree) return { lo: base, hi: base + size - 1, ephemeral };
  }
  throw new Error(`No block of ${size} free ports on ${LOOPBACK} outside the ephemeral range ${ephemeral.join('-')}`);
}

/** A TCP service that greets (like SSH/SMTP) and closes, so a banner grab costs no waiting. */
export function startGreetingServer(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined); // nmap's connect scan resets the connection
      socket.end('SSH-2.0-PerimeterBench\r\n');
    });
    server.once('error', reject);
    server.listen({ port, host: LOOPBACK, exclusive: true }, () => resolve(server));
  });
}

// ---------------------------------------------------------------- nmap

interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs / 1000}s`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** nmap's version line; installs Debian's nmap (apt-get, then update + retry) when it is missing. */
export async function ensureNmap(log: (line: string) => void): Promise<string> {
  const version = async () => {
    try {
      const result = await run('nmap', ['--version'], 10_000);
      return result.code === 0 ? result.stdout.split('\n')[0]!.trim() : undefined;
    } catch {
      return undefined;
    }
  };
  const found = await version();
  if (found) return found;
  log('nmap is missing: installing it with apt-get (benchmark setup only, not a product dependency)...');
  let install = await run('apt-get', ['install', '-y', '-q', 'nmap'], 300_000);
  if (install.code !== 0) {
    await run('apt-get', ['update', '-q'], 300_000);
    install = await run('apt-get', ['install', '-y', '-q', 'nmap'], 300_000);
  }
  const installed = await version();
  if (!installed) throw new Error(`Could not install nmap (apt-get exit ${install.code}):\n${install.stderr}`);
  return installed;
}

export interface NmapRun {
  wallMs: number;
  /** What nmap itself reports ("scanned in N seconds"), without its start-up. */
  reportedMs: number;
  open: number[];
}

/** `nmap -sT` of `lo-hi` on 127.0.0.1; -n -Pn skip DNS and host discovery, -oG - gives parseable output. */
export function nmapArgs(lo: number, hi: number): string[] {
  return ['-sT', '-n', '-Pn', '-p', `${lo}-${hi}`, '-oG', '-', LOOPBACK];
}

export async function runNmap(lo: number, hi: number, timeoutMs: number): Promise<NmapRun> {
  const started = performance.now();
  const result = await run('nmap', nmapArgs(lo, hi), timeoutMs);
  const wallMs = performance.now() - started;
  if (result.code !== 0) throw new Error(`nmap exited with ${result.code}: ${result.stderr}`);
  const open = [...result.stdout.matchAll(/(\d+)\/open\/tcp/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
  const reported = /scanned in ([\d.]+) seconds/.exec(result.stdout);
  return { wallMs, reportedMs: reported ? Number(reported[1]) * 1000 : Number.NaN, open };
}
