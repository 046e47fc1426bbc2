/**
 * Messages between the server's thread and the embedded database's thread (thread.ts ⇄ worker.ts).
 *
 * The database thread speaks the PostgreSQL wire protocol: the server's side is node-postgres with a stream in
 * place of a socket, so the embedded default runs the same driver, adapter and SQL as a PostgreSQL server.
 */

/** workerData: what to open. */
export interface EmbeddedWorkerOptions {
  /** Where PGlite keeps its files; absent means in memory. */
  dataDir?: string;
  /** A dumpDataDir() archive to start from (a template, or the shipped seed on a first start). */
  loadDataDir?: Blob;
}

export type ToWorker =
  /** A connection's client-to-server bytes (one or more whole protocol messages). */
  | { type: 'wire'; connection: number; bytes: Uint8Array }
  /** A connection begins; any session state another connection left (a transaction, prepared statements) is dropped. */
  | { type: 'open'; connection: number }
  /** A connection ended; a transaction it left open is rolled back. */
  | { type: 'end'; connection: number }
  | { type: 'dump'; request: number }
  | { type: 'close' };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /** Exactly one per `wire` message: the server's bytes (possibly none). */
  | { type: 'wire'; connection: number; bytes: Uint8Array }
  | { type: 'dumped'; request: number; archive?: Blob; error?: string }
  | { type: 'closed' }
  /** The database cannot go on (PGlite aborted): every connection is lost. */
  | { type: 'fatal'; message: string };
