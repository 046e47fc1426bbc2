import { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { shippedPath } from '../../shipped-files.js';
import type { EmbeddedWorkerOptions, FromWorker, ToWorker } from './protocol.js';

/**
 * Compiled (dist/, `npm start`), the thread runs its own bundle, worker.js. From source (tsx: dev, tests) a worker
 * thread does not inherit the loader, so it starts through a file that registers tsx first.
 */
const WORKER_ENTRY = import.meta.url.endsWith('.ts') ? new URL('./worker.boot.mjs', import.meta.url) : pathToFileURL(shippedPath('src/db/embedded/worker.js'));

/**
 * The embedded PostgreSQL (PGlite) on a thread of its own, reached through node-postgres: `openStream()` is the
 * `stream` option of a pg Pool, in place of a TCP socket. One PGlite is one backend, so the pool over it has one
 * connection; the bytes go between threads as transferred buffers, with no socket or system call on the way.
 */
export class EmbeddedDatabaseThread {
  private readonly streams = new Map<number, WireStream>();
  private readonly dumps = new Map<number, { resolve: (archive: Blob) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  /** Messages the thread has not answered yet: while any is, the thread keeps the process alive. */
  private awaiting = 0;
  private lost?: Error;
  private exited = false;
  private closing?: Promise<void>;
  private onClosed?: () => void;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message: FromWorker) => this.receive(message));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => {
      this.exited = true;
      if (!this.closing) this.fail(new Error(`the embedded database's thread exited (code ${code})`));
      this.onClosed?.();
    });
  }

  /** Starts the thread and opens the database in it (a template or seed archive, or the files under `dataDir`). */
  static async start(options: EmbeddedWorkerOptions): Promise<EmbeddedDatabaseThread> {
    const worker = new Worker(WORKER_ENTRY, { workerData: options, stdout: false, stderr: false });
    let onMessage!: (message: FromWorker) => void;
    let onError!: (error: Error) => void;
    let onExit!: (code: number) => void;
    try {
      await new Promise<void>((resolve, reject) => {
        onMessage = (message) => {
          if (message.type === 'ready') resolve();
          else if (message.type === 'failed') reject(new Error(`The embedded database did not open: ${message.message}`));
        };
        onError = (error) => reject(new Error(`The embedded database did not open: ${error.message}`, { cause: error }));
        onExit = (code) => reject(new Error(`The embedded database did not open: its thread exited (code ${code})`));
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      });
    } catch (error) {
      await worker.terminate();
      throw error;
    } finally {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    }
    worker.unref();
    return new EmbeddedDatabaseThread(worker);
  }

  /** A new connection to the database: node-postgres's `stream`. */
  openStream(): Duplex {
    const id = this.nextId++;
    const stream = new WireStream(
      (bytes) => this.post({ type: 'wire', connection: id, bytes }, [bytes.buffer as ArrayBuffer]),
      () => {
        if (this.streams.delete(id) && !this.lost && !this.closing) this.post({ type: 'end', connection: id }, [], false);
      },
    );
    if (this.lost) {
      process.nextTick(() => stream.destroy(this.lost));
      return stream;
    }
    this.streams.set(id, stream);
    this.post({ type: 'open', connection: id }, [], false);
    return stream;
  }

  /** The whole data directory as a gzipped tar (PGlite's dumpDataDir), taken between two statements. */
  dump(): Promise<Blob> {
    if (this.lost) return Promise.reject(this.lost);
    const request = this.nextId++;
    return new Promise<Blob>((resolve, reject) => {
      this.dumps.set(request, { resolve, reject });
      this.post({ type: 'dump', request });
    });
  }

  /** Closes the database (its files are complete on disk) and ends the thread. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.onClosed = resolve;
      if (this.exited) return resolve();
      if (this.lost) return void this.worker.terminate();
      this.worker.ref();
      this.worker.postMessage({ type: 'close' } satisfies ToWorker);
    });
    return this.closing;
  }

  /** `answered`: the thread replies to it (wire, dump); until it has, the thread keeps the process alive. */
  private post(message: ToWorker, transfer: ArrayBuffer[] = [], answered = true): void {
    if (answered && this.awaiting++ === 0) this.worker.ref();
    this.worker.postMessage(message, transfer);
  }

  private settleOne(): void {
    if (--this.awaiting === 0 && !this.closing) this.worker.unref();
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case 'wire':
        this.settleOne();
        this.streams.get(message.connection)?.deliver(message.bytes);
        return;
      case 'dumped': {
        this.settleOne();
        const waiter = this.dumps.get(message.request);
        this.dumps.delete(message.request);
        if (message.archive) waiter?.resolve(message.archive);
        else waiter?.reject(new Error(`Dumping the embedded database failed: ${message.error}`));
        return;
      }
      case 'fatal':
        this.fail(new Error(`The embedded database stopped: ${message.message}`));
        return;
      case 'closed':
        void this.worker.terminate();
        return;
    }
  }

  /** The thread is gone: every connection and pending dump fails now rather than waiting forever. */
  private fail(error: Error): void {
    if (this.lost) return;
    this.lost = error;
    for (const stream of this.streams.values()) stream.destroy(error);
    this.streams.clear();
    for (const waiter of this.dumps.values()) waiter.reject(error);
    this.dumps.clear();
    this.worker.unref();
  }
}

/**
 * What node-postgres takes for a socket. Its writes (Parse, Bind, Execute, Sync: one write each) are gathered
 * until the end of the current tick and go over as one message; the answer comes back as one chunk.
 */
class WireStream extends Duplex {
  private gathered: Buffer[] = [];

  constructor(
    private readonly sendBytes: (bytes: Uint8Array) => void,
    private readonly ended: () => void,
  ) {
    super();
  }

  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  deliver(bytes: Uint8Array): void {
    if (bytes.byteLength) this.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.gathered.push(chunk) === 1) queueMicrotask(() => this.flush());
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.flush();
    this.push(null);
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.gathered = [];
    this.ended();
    done(error);
  }

  override _read(): void {}

  private flush(): void {
    if (!this.gathered.length) return;
    const size = this.gathered.reduce((sum, chunk) => sum + chunk.length, 0);
    // A buffer of its own (not a slice of Node's shared pool): it is transferred, which detaches it.
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of this.gathered) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    this.gathered = [];
    this.sendBytes(bytes);
  }
}
