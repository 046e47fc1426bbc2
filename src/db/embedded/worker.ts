/**
 * The embedded database's own thread: PGlite runs here, so a long query never stalls the server's event loop
 * (request parsing, responses, timers, the job queue's polling all go on while the database works), and the
 * server's thread and this one use both cores under load.
 *
 * It serves the PostgreSQL wire protocol to the connections thread.ts opens: PGlite executes protocol messages
 * natively (startup included); this file only frames them, answers what PGlite must not see (SSL negotiation,
 * cancel and terminate requests), and keeps one connection's transaction from leaking into the next one's.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { EmbeddedWorkerOptions, FromWorker, ToWorker } from './protocol.js';

const PROTOCOL_3 = 196_608;
const SSL_REQUEST = 80_877_103;
const CANCEL_REQUEST = 80_877_102;
const TERMINATE = 0x58; // 'X': handled here; PGlite would end its one backend.
const NO_SSL = new Uint8Array([0x4e]); // 'N'

const port = parentPort;
if (!port) throw new Error('src/db/embedded/worker.ts runs as a worker thread (thread.ts starts it)');
const send = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

const options = workerData as EmbeddedWorkerOptions;
let db: PGlite;
try {
  db = await PGlite.create({ dataDir: options.dataDir, loadDataDir: options.loadDataDir });
} catch (error) {
  // Reported as a message: the server's thread turns it into its own error and ends this thread.
  send({ type: 'failed', message: (error as Error).message ?? String(error) });
  await new Promise<never>(() => undefined);
}

/** Bytes of a connection's message that arrived without its end (kept until the rest comes). */
const partial = new Map<number, Uint8Array>();
/** Connections past their startup message: from then on every message has a type byte. */
const started = new Set<number>();
let opened = 0;
/** One thing at a time: PGlite is one backend, and a message's answer must be complete before the next begins. */
let tail: Promise<unknown> = Promise.resolve();
const serially = (work: () => Promise<void>) => {
  tail = tail.then(work).catch(fatal);
};

function fatal(error: unknown): void {
  send({ type: 'fatal', message: (error as Error)?.message ?? String(error) });
  process.exit(1);
}

/** A new connection starts as a fresh session would: no transaction, no prepared statements of a previous one. */
async function resetSession(): Promise<void> {
  if (db.isInTransaction()) await db.exec('ROLLBACK');
  await db.exec('DEALLOCATE ALL');
}

/** Splits whole messages off `bytes`: startup-phase ones (no type byte) and typed ones. */
function* messages(connection: number, bytes: Uint8Array): Generator<{ start: boolean; code: number; body: Uint8Array }> {
  const carried = partial.get(connection);
  let buffer = carried ? Buffer.concat([carried, bytes]) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  partial.delete(connection);
  while (buffer.length >= 5) {
    // Before startup, a message may have no type byte: its code is in bytes 4–7.
    if (!started.has(connection) && buffer.length < 8) break;
    const second = buffer.length >= 8 ? buffer.readInt32BE(4) : -1;
    const untyped = !started.has(connection) && (second === PROTOCOL_3 || second === SSL_REQUEST || second === CANCEL_REQUEST);
    const length = untyped ? buffer.readInt32BE(0) : 1 + buffer.readInt32BE(1);
    if (buffer.length < length) break;
    if (untyped && second === PROTOCOL_3) started.add(connection);
    yield { start: untyped, code: untyped ? second : buffer[0]!, body: buffer.subarray(0, length) };
    buffer = buffer.subarray(length);
  }
  if (buffer.length) partial.set(connection, Uint8Array.from(buffer));
}

async function answer(connection: number, bytes: Uint8Array): Promise<void> {
  const out: Uint8Array[] = [];
  let size = 0;
  const keep = (data: Uint8Array) => {
    // PGlite hands out views of its own memory: copy before the next message overwrites them.
    out.push(data.slice());
    size += data.length;
  };
  for (const message of messages(connection, bytes)) {
    if (message.start && message.code === SSL_REQUEST) keep(NO_SSL);
    else if (message.start && message.code === CANCEL_REQUEST) continue;
    else if (!message.start && message.code === TERMINATE) await closeConnection(connection);
    else await db.execProtocolRawStream(message.body, { onRawData: keep });
  }
  const reply = new Uint8Array(size);
  let offset = 0;
  for (const chunk of out) {
    reply.set(chunk, offset);
    offset += chunk.length;
  }
  send({ type: 'wire', connection, bytes: reply }, [reply.buffer]);
}

async function closeConnection(connection: number): Promise<void> {
  partial.delete(connection);
  started.delete(connection);
  if (db.isInTransaction()) await db.exec('ROLLBACK');
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'wire':
      return serially(() => answer(message.connection, message.bytes));
    case 'open':
      return serially(async () => {
        if (opened++ > 0) await resetSession();
      });
    case 'end':
      return serially(() => closeConnection(message.connection));
    case 'dump':
      return serially(async () => {
        try {
          send({ type: 'dumped', request: message.request, archive: await db.dumpDataDir('gzip') });
        } catch (error) {
          send({ type: 'dumped', request: message.request, error: (error as Error).message });
        }
      });
    case 'close':
      return serially(async () => {
        await db.close();
        send({ type: 'closed' });
        port.close();
      });
  }
});

send({ type: 'ready' });
