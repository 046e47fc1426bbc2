/**
 * Socket reads and writes as nuclei's network protocol does them, bounded.
 *
 * - `read(n)` is Go's single `conn.Read` with a deadline: it returns as soon as at least one byte is there (up to
 *   n, whatever has arrived), fails on timeout or end of stream with nothing read.
 * - `readAll()` collects until the peer closes, errors or the deadline passes (one deadline for the whole read,
 *   so a peer trickling bytes cannot hold us), and returns what came.
 * - Every read counts against one cap per connection; past it the socket is paused and reads see end of stream.
 */
import type { Duplex } from 'node:stream';

export class ReadTimeoutError extends Error {
  constructor(ms: number) {
    super(`read timed out after ${ms} ms`);
  }
}

export class SocketReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes handed out so far. */
  private consumed = 0;
  private ended = false;
  private failure?: Error;
  private wake?: () => void;

  constructor(
    socket: Duplex,
    private readonly maxBytes: number,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      // enough is buffered to serve every read up to the cap: stop taking more from the kernel
      if (this.consumed + this.buffered >= this.maxBytes) socket.pause();
      this.notify();
    });
    socket.on('end', () => this.finish());
    socket.on('close', () => this.finish());
    socket.on('error', (err: Error) => {
      this.failure ??= err;
      this.finish();
    });
  }

  private finish() {
    this.ended = true;
    this.notify();
  }

  private notify() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private remaining(): number {
    return Math.max(0, this.maxBytes - this.consumed);
  }

  /** Up to `n` buffered bytes (never more than the cap allows). */
  private take(n: number): Buffer {
    const want = Math.min(n, this.buffered, this.remaining());
    const parts: Buffer[] = [];
    let got = 0;
    while (got < want) {
      const head = this.chunks[0]!;
      const part = head.length <= want - got ? head : head.subarray(0, want - got);
      parts.push(part);
      got += part.length;
      if (part === head) this.chunks.shift();
      else this.chunks[0] = head.subarray(part.length);
    }
    this.buffered -= got;
    this.consumed += got;
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, got);
  }

  /** Resolves when something happens (data, end, error) or at `deadline`; false on deadline. */
  private waitUntil(deadline: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const ms = deadline - Date.now();
      if (ms <= 0 || signal?.aborted) {
        resolve(false);
        return;
      }
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      const done = (happened: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.wake === wake) this.wake = undefined;
        resolve(happened);
      };
      const wake = () => done(true);
      this.wake = wake;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private exhausted(): boolean {
    return this.remaining() === 0 || ((this.ended || this.failure !== undefined) && this.buffered === 0);
  }

  /** One Go `conn.Read(make([]byte, n))` under a deadline. */
  async read(n: number, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.buffered > 0 && this.remaining() > 0) return this.take(n);
      if (this.exhausted()) throw this.failure ?? new Error(this.remaining() === 0 ? 'read limit reached' : 'connection closed (EOF)');
      if (!(await this.waitUntil(deadline, signal))) {
        if (this.buffered > 0 && this.remaining() > 0) return this.take(n);
        throw new ReadTimeoutError(timeoutMs);
      }
    }
  }

  /** Everything until end of stream, error, the cap or the deadline. */
  async readAll(timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    const parts: Buffer[] = [];
    for (;;) {
      if (this.buffered > 0 && this.remaining() > 0) parts.push(this.take(this.buffered));
      if (this.exhausted()) break;
      if (!(await this.waitUntil(deadline, signal))) {
        if (this.buffered > 0 && this.remaining() > 0) parts.push(this.take(this.buffered));
        break;
      }
    }
    const all = Buffer.concat(parts);
    if (all.length === 0 && this.failure) throw this.failure;
    return all;
  }
}

/** Write and wait until the bytes are handed to the kernel, or fail on error / timeout. */
export function writeWithTimeout(socket: Duplex, data: Uint8Array, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed || !socket.writable) {
      reject(new Error('connection closed before writing'));
      return;
    }
    const timer = setTimeout(() => finish(new Error(`write timed out after ${timeoutMs} ms`)), timeoutMs);
    const onError = (err: Error) => finish(err);
    const finish = (err?: Error | null) => {
      clearTimeout(timer);
      socket.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    socket.once('error', onError);
    socket.write(data, (err) => finish(err));
  });
}

/** `host:port` → parts; IPv6 in brackets (`[::1]:22`). Undefined when there is no valid port. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(address) ?? /^([^:[\]]+):(\d{1,5})$/.exec(address);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535 || m[1]!.trim() === '') return undefined;
  return { host: m[1]!, port };
}

/** Go's net.JoinHostPort. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
