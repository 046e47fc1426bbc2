/**
 * JARM (salesforce/jarm): ten crafted ClientHellos, each on a fresh TCP connection opened through the injected
 * NetworkConnector (so the caller's scope guard judges every connection), the ServerHellos read back and hashed.
 *
 * Timing follows jarm.py: the probes go one after the other; a probe whose connection or answer times out makes
 * the whole fingerprint 62 zeros (jarm.py stops there); a refused or reset connection, an alert or anything that
 * is not a ServerHello only fails that probe. The answer is read until the first TLS record is complete, the
 * peer closes or 1484 bytes arrived (jarm.py's single recv of 1484 bytes, without depending on how TCP split it).
 */
import type { Duplex } from 'node:stream';
import type { NetworkConnector } from '../network-types.js';
import { FAILED_PROBE, jarmHash, readServerHello, ZERO_JARM } from './fingerprint.js';
import { buildClientHello, JARM_PROBES } from './probes.js';

export { jarmHash, readServerHello, ZERO_JARM } from './fingerprint.js';
export { buildClientHello, JARM_PROBES, type JarmProbe } from './probes.js';

/** Bytes of one probe's answer that are read (jarm.py's recv size). */
export const JARM_READ_BYTES = 1484;
/** Per-probe timeout of nuclei's `jarm()` helper (tlsx HashWithDialer with 10 s); jarm.py uses 20 s. */
export const JARM_DEFAULT_TIMEOUT_MS = 10_000;

export interface JarmOptions {
  connect: NetworkConnector;
  /** Connect and read timeout of each probe. Default 10 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface JarmResult {
  /** 62 characters; all zeros when no probe got a ServerHello or one timed out. */
  hash: string;
  /** The probes' raw fingerprints (`cipher|version|alpn|extensions`), jarm.py's verbose output. */
  raw: string[];
  /** Why probes failed (distinct messages), for the caller's warnings. */
  errors: string[];
}

class ProbeTimeout extends Error {}

function readAnswer(socket: Duplex, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = (err?: Error) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      const data = Buffer.concat(chunks).subarray(0, JARM_READ_BYTES);
      // what arrived before a reset or the deadline is what jarm.py's recv would have returned
      if (err && data.length === 0) reject(err);
      else resolve(data);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.length;
      const head = chunks.length > 1 ? Buffer.concat(chunks) : chunk;
      if (total >= JARM_READ_BYTES || (head.length >= 5 && head.length >= 5 + head.readUInt16BE(3))) finish();
    };
    const onEnd = () => finish();
    const onError = (err: Error) => finish(err);
    const onAbort = () => finish(new Error('aborted'));
    const timer = setTimeout(() => finish(new ProbeTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.once('error', onError);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function connectWithin(opts: JarmOptions, host: string, port: number, timeoutMs: number): Promise<Duplex> {
  const controller = new AbortController();
  const outer = opts.signal;
  const onOuterAbort = () => controller.abort();
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    return await opts.connect({ host, port, tls: false, timeoutMs, signal: controller.signal });
  } catch (err) {
    if (timedOut || /timed out/i.test((err as Error).message)) throw new ProbeTimeout(`connect timed out after ${timeoutMs} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

function write(socket: Duplex, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(data, (err) => (err ? reject(err) : resolve())));
}

/** One probe: its raw fingerprint, or ProbeTimeout. */
async function probeOnce(opts: JarmOptions, host: string, port: number, hello: Buffer, timeoutMs: number): Promise<string> {
  const socket = await connectWithin(opts, host, port, timeoutMs);
  socket.on('error', () => {});
  try {
    const answer = readAnswer(socket, timeoutMs, opts.signal);
    // a failed write ends the probe; the pending read must not become an unhandled rejection
    answer.catch(() => {});
    await write(socket, hello);
    return readServerHello(await answer);
  } finally {
    socket.destroy();
  }
}

/** The JARM fingerprint of host:port. `host` is also the server_name sent, as jarm.py does (IP literals too). */
export async function computeJarm(host: string, port: number, opts: JarmOptions): Promise<JarmResult> {
  const timeoutMs = Math.max(1, opts.timeoutMs ?? JARM_DEFAULT_TIMEOUT_MS);
  const raw: string[] = [];
  const errors = new Set<string>();
  for (const probe of JARM_PROBES) {
    if (opts.signal?.aborted) throw new Error('aborted');
    try {
      raw.push(await probeOnce(opts, host, port, buildClientHello(probe, host), timeoutMs));
    } catch (err) {
      if (opts.signal?.aborted) throw new Error('aborted');
      errors.add((err as Error).message);
      if (err instanceof ProbeTimeout) return { hash: ZERO_JARM, raw: JARM_PROBES.map(() => FAILED_PROBE), errors: [...errors] };
      raw.push(FAILED_PROBE);
    }
  }
  return { hash: jarmHash(raw), raw, errors: [...errors] };
}
