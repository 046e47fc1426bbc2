import { createRequire as __perimeterCreateRequire } from 'node:module'; const require = __perimeterCreateRequire(import.meta.url);

// src/ops/embedded-seed.ts
import { writeFileSync } from "node:fs";

// src/db.ts
import { existsSync as existsSync2, mkdirSync, readFileSync as readFileSync2 } from "node:fs";
import { dirname as dirname2, join as join2 } from "node:path";
import { EventEmitter } from "node:events";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../../prisma/generated/prisma/client.js";

// src/db/embedded/thread.ts
import { Duplex } from "node:stream";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

// src/shipped-files.ts
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
function findProjectRoot() {
  const self = fileURLToPath(import.meta.url);
  for (let dir = dirname(self); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json in any directory above ${self}`);
  }
}
var projectRoot = findProjectRoot();
function shippedPath(relative) {
  return join(projectRoot, relative);
}

// src/db/embedded/thread.ts
var WORKER_ENTRY = import.meta.url.endsWith(".ts") ? new URL("./worker.boot.mjs", import.meta.url) : pathToFileURL(shippedPath("src/db/embedded/worker.js"));
var EmbeddedDatabaseThread = class _EmbeddedDatabaseThread {
  constructor(worker) {
    this.worker = worker;
    worker.on("message", (message) => this.receive(message));
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      this.exited = true;
      if (!this.closing) this.fail(new Error(`the embedded database's thread exited (code ${code})`));
      this.onClosed?.();
    });
  }
  worker;
  streams = /* @__PURE__ */ new Map();
  dumps = /* @__PURE__ */ new Map();
  nextId = 1;
  /** Messages the thread has not answered yet: while any is, the thread keeps the process alive. */
  awaiting = 0;
  lost;
  exited = false;
  closing;
  onClosed;
  /** Starts the thread and opens the database in it (a template or seed archive, or the files under `dataDir`). */
  static async start(options) {
    const worker = new Worker(WORKER_ENTRY, { workerData: options, stdout: false, stderr: false });
    try {
      await new Promise((resolve2, reject) => {
        worker.on("message", (message) => {
          if (message.type === "ready") resolve2();
          else if (message.type === "failed") reject(new Error(`The embedded database did not open: ${message.message}`));
        });
        worker.on("error", (error) => reject(new Error(`The embedded database did not open: ${error.message}`, { cause: error })));
        worker.on("exit", (code) => reject(new Error(`The embedded database did not open: its thread exited (code ${code})`)));
      });
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    worker.removeAllListeners();
    worker.unref();
    return new _EmbeddedDatabaseThread(worker);
  }
  /** A new connection to the database: node-postgres's `stream`. */
  openStream() {
    const id = this.nextId++;
    const stream = new WireStream(
      (bytes) => this.post({ type: "wire", connection: id, bytes }, [bytes.buffer]),
      () => {
        if (this.streams.delete(id) && !this.lost && !this.closing) this.post({ type: "end", connection: id });
      }
    );
    if (this.lost) {
      process.nextTick(() => stream.destroy(this.lost));
      return stream;
    }
    this.streams.set(id, stream);
    this.post({ type: "open", connection: id }, [], false);
    return stream;
  }
  /** The whole data directory as a gzipped tar (PGlite's dumpDataDir), taken between two statements. */
  dump() {
    if (this.lost) return Promise.reject(this.lost);
    const request = this.nextId++;
    return new Promise((resolve2, reject) => {
      this.dumps.set(request, { resolve: resolve2, reject });
      this.post({ type: "dump", request });
    });
  }
  /** Closes the database (its files are complete on disk) and ends the thread. */
  close() {
    this.closing ??= new Promise((resolve2) => {
      this.onClosed = resolve2;
      if (this.exited) return resolve2();
      if (this.lost) return void this.worker.terminate();
      this.worker.ref();
      this.worker.postMessage({ type: "close" });
    });
    return this.closing;
  }
  post(message, transfer = [], answered = true) {
    if (answered && this.awaiting++ === 0) this.worker.ref();
    this.worker.postMessage(message, transfer);
  }
  settleOne() {
    if (--this.awaiting === 0 && !this.closing) this.worker.unref();
  }
  receive(message) {
    switch (message.type) {
      case "wire":
        this.settleOne();
        this.streams.get(message.connection)?.deliver(message.bytes);
        return;
      case "dumped": {
        this.settleOne();
        const waiter = this.dumps.get(message.request);
        this.dumps.delete(message.request);
        if (message.archive) waiter?.resolve(message.archive);
        else waiter?.reject(new Error(`Dumping the embedded database failed: ${message.error}`));
        return;
      }
      case "fatal":
        this.fail(new Error(`The embedded database stopped: ${message.message}`));
        return;
      case "closed":
        void this.worker.terminate();
        return;
    }
  }
  /** The thread is gone: every connection and pending dump fails now rather than waiting forever. */
  fail(error) {
    if (this.lost) return;
    this.lost = error;
    for (const stream of this.streams.values()) stream.destroy(error);
    this.streams.clear();
    for (const waiter of this.dumps.values()) waiter.reject(error);
    this.dumps.clear();
    this.worker.unref();
  }
};
var WireStream = class extends Duplex {
  constructor(sendBytes, ended) {
    super();
    this.sendBytes = sendBytes;
    this.ended = ended;
  }
  sendBytes;
  ended;
  gathered = [];
  connect() {
    process.nextTick(() => this.emit("connect"));
    return this;
  }
  setNoDelay() {
    return this;
  }
  setKeepAlive() {
    return this;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  deliver(bytes) {
    if (bytes.byteLength) this.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }
  _write(chunk, _encoding, done) {
    if (this.gathered.push(chunk) === 1) queueMicrotask(() => this.flush());
    done();
  }
  _final(done) {
    this.flush();
    this.push(null);
    done();
  }
  _destroy(error, done) {
    this.gathered = [];
    this.ended();
    done(error);
  }
  _read() {
  }
  flush() {
    if (!this.gathered.length) return;
    const size = this.gathered.reduce((sum, chunk) => sum + chunk.length, 0);
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of this.gathered) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    this.gathered = [];
    this.sendBytes(bytes);
  }
};

// src/db/migrations.ts
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
var PRISMA_LOCK_KEY = 72707369;
var CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;
var defaultMigrationsDir = shippedPath("prisma/migrations");
var sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
function checksumMatches(sql, recorded) {
  const candidates = [sql, sql.replace(/\r\n/g, "\n"), sql.replace(/\r?\n/g, "\r\n")].map(sha256);
  const unpadded = (hex) => hex.replace(/../g, (b) => parseInt(b, 16).toString(16));
  return candidates.some((c) => c === recorded || unpadded(c) === recorded);
}
async function readMigrations(dir = defaultMigrationsDir) {
  const entries = await readdir(dir, { withFileTypes: true }).catch((e) => {
    if (e.code === "ENOENT") return [];
    throw e;
  });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name, "migration.sql");
      const sql = await readFile(file, "utf8").catch((e) => {
        throw new Error(`Migration ${name}: cannot read ${file}: ${e.message}`);
      });
      return { name, sql, checksum: sha256(sql) };
    })
  );
}
function checkHistory(migrations, rows, log) {
  const byName = new Map(migrations.map((m) => [m.name, m]));
  const applied = /* @__PURE__ */ new Set();
  for (const row of rows) {
    if (!row.finished_at) {
      throw new Error(
        `Migration ${row.migration_name} failed earlier (started ${new Date(row.started_at).toISOString()}, never finished). Repair the database by hand, then mark it with \`prisma migrate resolve --rolled-back ${row.migration_name}\` (or set rolled_back_at on its _prisma_migrations row) before migrating again.`
      );
    }
    const file = byName.get(row.migration_name);
    if (!file) {
      log(`warning: migration ${row.migration_name} is recorded in the database but missing from the migrations directory`);
    } else if (!checksumMatches(file.sql, row.checksum)) {
      throw new Error(
        `Migration ${row.migration_name} was modified after it was applied: the checksum of its migration.sql (${file.checksum}) differs from the recorded one (${row.checksum}). Restore the file and add a new migration instead.`
      );
    }
    applied.add(row.migration_name);
  }
  return applied;
}
async function applyMigrations(db, opts = {}) {
  const migrations = await readMigrations(opts.migrationsDir);
  const run = (conn) => applyOnConnection(conn, migrations, opts.log ?? (() => {
  }));
  return db.session ? db.session(run) : run(db);
}
async function applyOnConnection(db, migrations, log) {
  const applied = [];
  let locked = false;
  let succeeded = false;
  try {
    await db.query(`SELECT pg_advisory_lock(${PRISMA_LOCK_KEY})`);
    locked = true;
    await db.exec(CREATE_MIGRATIONS_TABLE);
    const { rows } = await db.query(
      `SELECT migration_name, checksum, finished_at, started_at FROM "_prisma_migrations"
       WHERE rolled_back_at IS NULL ORDER BY started_at`
    );
    const done = checkHistory(migrations, rows, log);
    for (const m of migrations.filter((m2) => !done.has(m2.name))) {
      log(`applying ${m.name}`);
      await db.exec("BEGIN");
      try {
        await db.exec(m.sql);
        await db.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, clock_timestamp(), 1)`,
          [randomUUID(), m.checksum, m.name]
        );
        await db.exec("COMMIT");
      } catch (e) {
        await db.exec("ROLLBACK").catch(() => {
        });
        throw new Error(`Migration ${m.name} failed and was rolled back: ${e.message}`, { cause: e });
      }
      applied.push(m.name);
    }
    succeeded = true;
    return { applied };
  } finally {
    if (locked) {
      await db.query(`SELECT pg_advisory_unlock(${PRISMA_LOCK_KEY})`).catch((e) => {
        if (succeeded) throw e;
      });
    }
  }
}
var clientExecutor = (client) => ({
  query: (sql, params) => client.query(sql, params),
  // Without params node-postgres uses the simple protocol, which accepts multi-statement scripts.
  exec: (sql) => client.query(sql)
});
function pgExecutor(client) {
  if (!("totalCount" in client)) return clientExecutor(client);
  const pool = client;
  return {
    query: (sql, params) => pool.query(sql, params),
    exec: (sql) => pool.query(sql),
    async session(fn) {
      const conn = await pool.connect();
      let failed = true;
      try {
        const result = await fn(clientExecutor(conn));
        failed = false;
        return result;
      } finally {
        conn.release(failed);
      }
    }
  };
}

// src/db/statement-names.ts
var MAX_NAMED_STATEMENTS = 1e3;
var MAX_NAMED_PARAMETERS = 64;
function statementNames() {
  const names = /* @__PURE__ */ new Map();
  return (query) => {
    const known = names.get(query.sql);
    if (known) return known;
    if (names.size >= MAX_NAMED_STATEMENTS || query.args.length > MAX_NAMED_PARAMETERS) return void 0;
    const name = `perimeter_${names.size + 1}`;
    names.set(query.sql, name);
    return name;
  };
}

// src/ops/data-dir-lock.ts
import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, utimesSync, writeSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
var REFRESH_MS = 1e4;
var STALE_MS = 6e4;
var heldHere = /* @__PURE__ */ new Set();
var DataDirInUseError = class extends Error {
  name = "DataDirInUseError";
};
function startTicksOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : void 0;
  } catch {
    return void 0;
  }
}
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}
function readOwner(path2) {
  try {
    const raw = readFileSync(path2, "utf8");
    try {
      return { raw, owner: JSON.parse(raw) };
    } catch {
      return { raw };
    }
  } catch (error) {
    if (error.code === "ENOENT") return void 0;
    throw error;
  }
}
function liveOwner(path2, owner) {
  if (!owner || typeof owner.pid !== "number") return void 0;
  if (owner.host !== hostname()) {
    const age = Date.now() - statSync(path2).mtimeMs;
    return age < STALE_MS ? `pid ${owner.pid} on host ${owner.host}, refreshed ${Math.round(age / 1e3)} s ago` : void 0;
  }
  if (owner.pid === process.pid) return heldHere.has(path2) ? "this process" : void 0;
  if (!isAlive(owner.pid)) return void 0;
  const ticks = startTicksOf(owner.pid);
  if (owner.startTicks !== void 0 && ticks !== void 0 && ticks !== owner.startTicks) return void 0;
  return `pid ${owner.pid}, running since ${owner.since}`;
}
function lockDataDir(dir, lockPath) {
  lockPath = resolve(lockPath);
  const owner = { pid: process.pid, host: hostname(), startTicks: startTicksOf(process.pid), since: (/* @__PURE__ */ new Date()).toISOString() };
  const temp = `${lockPath}.${process.pid}.${randomBytes(4).toString("hex")}`;
  const ours = JSON.stringify(owner);
  const fd = openSync(temp, "wx", 384);
  writeSync(fd, ours);
  closeSync(fd);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temp, lockPath);
        break;
      } catch (error) {
        if (error.code !== "EEXIST" || attempt >= 5) throw error;
      }
      const current = readOwner(lockPath);
      if (!current) continue;
      const holder = liveOwner(lockPath, current.owner);
      if (holder) {
        throw new DataDirInUseError(
          `The data directory ${dir} (DATA_DIR) is in use by another Perimeter process (${holder}). Two servers on one embedded database overwrite each other: stop the other one, or give this one its own DATA_DIR.`
        );
      }
      const aside = `${lockPath}.stale.${process.pid}.${randomBytes(4).toString("hex")}`;
      try {
        renameSync(lockPath, aside);
      } catch (error) {
        if (error.code === "ENOENT") continue;
        throw error;
      }
      if (readOwner(aside)?.raw !== current.raw) {
        try {
          linkSync(aside, lockPath);
        } catch {
        }
      }
      unlinkSync(aside);
    }
  } finally {
    unlinkSync(temp);
  }
  heldHere.add(lockPath);
  const refresh = setInterval(() => {
    try {
      const now = /* @__PURE__ */ new Date();
      utimesSync(lockPath, now, now);
    } catch {
    }
  }, REFRESH_MS);
  refresh.unref();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(refresh);
    process.off("exit", release);
    heldHere.delete(lockPath);
    if (readOwner(lockPath)?.raw === ours) {
      try {
        unlinkSync(lockPath);
      } catch {
      }
    }
  };
  process.on("exit", release);
  return { path: lockPath, release };
}

// src/db.ts
import { Prisma } from "../../prisma/generated/prisma/client.js";
function seedFor(options) {
  if (!options.pgliteDir || !options.pgliteSeedFile || existsSync2(join2(options.pgliteDir, "PG_VERSION"))) return void 0;
  if (!existsSync2(options.pgliteSeedFile)) return void 0;
  return new Blob([readFileSync2(options.pgliteSeedFile)], { type: "application/x-gzip" });
}
async function openDatabase(options) {
  const log = options.logQueries ? [{ emit: "event", level: "query" }] : void 0;
  const statementNameGenerator = options.preparedStatements === false ? void 0 : statementNames();
  if (options.url) {
    const pool2 = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    const prisma2 = new PrismaClient({ adapter: new PrismaPg(pool2, { statementNameGenerator }), log });
    const sql2 = pgExecutor(pool2);
    return {
      kind: "postgres",
      prisma: prisma2,
      sql: sql2,
      pool: pool2,
      migrate: async () => (await applyMigrations(sql2)).applied,
      close: async () => {
        await prisma2.$disconnect();
        await pool2.end();
      }
    };
  }
  let lock;
  if (options.pgliteDir) {
    mkdirSync(options.pgliteDir, { recursive: true, mode: 448 });
    lock = lockDataDir(dirname2(options.pgliteDir), `${options.pgliteDir}.lock`);
  }
  let thread;
  try {
    thread = await EmbeddedDatabaseThread.start(
      options.pgliteTemplate ? { loadDataDir: options.pgliteTemplate } : { dataDir: options.pgliteDir ? join2(options.pgliteDir) : void 0, loadDataDir: seedFor(options) }
    );
  } catch (error) {
    lock?.release();
    throw error;
  }
  const pool = new pg.Pool({ max: 1, idleTimeoutMillis: 0, user: "postgres", database: "postgres", stream: () => thread.openStream() });
  const notifications = new EventEmitter();
  pool.on("connect", (client) => client.on("notification", (message) => notifications.emit("notification", message.channel, message.payload ?? "")));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { statementNameGenerator }), log });
  const sql = pgExecutor(pool);
  return {
    kind: "pglite",
    prisma,
    sql,
    pool,
    embedded: thread,
    onNotification: (listener) => {
      notifications.on("notification", listener);
      return () => notifications.off("notification", listener);
    },
    migrate: async () => (await applyMigrations(sql)).applied,
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
      await thread.close();
      lock?.release();
    }
  };
}

// src/logger.ts
import { pino } from "pino";
function createLogger(level) {
  return pino({
    level,
    base: { service: "perimeter" },
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", 'req.headers["x-service-api-key"]', "*.password", "*.token", "*.apiKey"],
      censor: "[redacted]"
    }
  });
}

// src/queue.ts
import { createRequire } from "node:module";
import PgBoss from "pg-boss";

// src/queue-wakeup.ts
import pg2 from "pg";
var WAKE_CHANNEL = "perimeter_jobs";
var WAKE_SQL = "SELECT 1 AS woken FROM (SELECT pg_notify($1, $2)) AS notice";
var RECONNECT_MS = [250, 1e3, 5e3];
async function listenForJobs(db, log, onWake) {
  if (db.onNotification) {
    const unsubscribe = db.onNotification((channel, payload) => {
      if (channel === WAKE_CHANNEL) onWake(payload);
    });
    await db.sql.query(`LISTEN ${WAKE_CHANNEL}`);
    return {
      close: async () => {
        unsubscribe();
      }
    };
  }
  const options = db.pool.options;
  let closed = false;
  let client;
  let failures = 0;
  let timer;
  const connect = async () => {
    if (closed) return;
    const next = new pg2.Client({ ...options });
    next.on("notification", (message) => {
      if (message.channel === WAKE_CHANNEL && message.payload) onWake(message.payload);
    });
    next.on("error", (error) => {
      log.warn({ err: error }, "job wake-up connection lost: polling only until it is back");
      retry(next);
    });
    next.on("end", () => retry(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${WAKE_CHANNEL}`);
      client = next;
      failures = 0;
    } catch (error) {
      log.warn({ err: error }, "job wake-up connection failed: polling only until it is back");
      retry(next);
    }
  };
  const retry = (failed) => {
    if (closed || timer || client && client !== failed) return;
    client = void 0;
    failed.end().catch(() => void 0);
    const delay = RECONNECT_MS[Math.min(failures++, RECONNECT_MS.length - 1)];
    timer = setTimeout(() => {
      timer = void 0;
      void connect();
    }, delay);
    timer.unref();
  };
  await connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => void 0);
    }
  };
}

// src/queue.ts
var require2 = createRequire(import.meta.url);
var JobQueue = class {
  constructor(db, log, options = {}) {
    this.db = db;
    this.log = log;
    const connection = {
      schema: "pgboss",
      db: {
        executeSql: async (text, values) => {
          try {
            return await db.sql.query(text, values);
          } catch (error) {
            if (db.kind === "pglite" && !values?.length) await db.sql.exec("ROLLBACK").catch(() => void 0);
            throw error;
          }
        }
      }
    };
    const superviseSeconds = options.superviseSeconds ?? 30;
    this.boss = new PgBoss({
      ...connection,
      supervise: true,
      schedule: false,
      // Maintenance is what fails expired jobs (a killed worker's) so they are retried.
      maintenanceIntervalSeconds: superviseSeconds,
      monitorStateIntervalSeconds: superviseSeconds
    });
    this.boss.on("error", (error) => this.log.error({ err: error }, "job queue error"));
  }
  db;
  log;
  boss;
  started = false;
  definitions = /* @__PURE__ */ new Map();
  stopHooks = [];
  /** This process's pollers per queue, woken when a job is committed to their queue (queue-wakeup.ts). */
  pollers = /* @__PURE__ */ new Map();
  listener;
  define(definition) {
    this.definitions.set(definition.name, definition);
  }
  async start() {
    if (this.started) return;
    await this.refuseNewerSchema();
    await this.boss.start();
    for (const definition of this.definitions.values()) {
      const settings = {
        expireInSeconds: definition.expireInSeconds,
        retryLimit: definition.retryLimit,
        retryDelay: definition.retryDelay ?? 1,
        ...definition.deadLetter ? { deadLetter: definition.deadLetter } : {}
      };
      await this.boss.createQueue(definition.name, { name: definition.name, ...settings });
      await this.boss.updateQueue(definition.name, { name: definition.name, ...settings });
      await this.boss.cancel(definition.name, "00000000-0000-0000-0000-000000000000");
    }
    this.started = true;
  }
  /**
   * pg-boss migrates its schema up, never down. A database a newer pg-boss set up (the builds before the
   * move to pg-boss 10 used 11) would be driven with SQL that does not fit it: say so and how to fix it.
   */
  async refuseNewerSchema() {
    const supported = require2("pg-boss/version.json").schema;
    const { rows } = await this.db.sql.query(`SELECT to_regclass('pgboss.version') IS NOT NULL AS present`);
    if (!rows[0]?.present) return;
    const found = Number((await this.db.sql.query("SELECT version FROM pgboss.version")).rows[0]?.version);
    if (found > supported) {
      throw new Error(
        `The job queue schema "pgboss" is at version ${found}, newer than this build's pg-boss supports (${supported}). It holds only queued jobs: stop every process, run DROP SCHEMA pgboss CASCADE, and start again (running scans are then left unfinished).`
      );
    }
  }
  /** Enqueues a job; with `tx` the job commits or rolls back together with that transaction. */
  async send(name, data, options = {}, tx) {
    if (!tx) {
      const id2 = await this.boss.send(name, data, options);
      await this.wake(name);
      return id2;
    }
    const executeSql = async (text, values) => ({ rows: await tx.$queryRawUnsafe(text, ...values) });
    const id = await this.boss.send(name, data, { ...options, db: { executeSql } });
    await this.wake(name, tx);
    return id;
  }
  /** Enqueues many jobs in one statement (one round trip, however many); with `tx`, in that transaction. */
  async sendMany(name, data, tx) {
    if (!data.length) return;
    const jobs = data.map((item) => ({ name, data: item }));
    if (!tx) {
      await this.boss.insert(jobs);
      await this.wake(name);
      return;
    }
    const executeSql = async (text, values) => ({ rows: await tx.$queryRawUnsafe(text, ...values) });
    await this.boss.insert(jobs, { db: { executeSql } });
    await this.wake(name, tx);
  }
  /** Tells every process's pollers of `name` that a job is there; inside `tx` the notice goes out at commit. */
  async wake(name, tx) {
    if (tx) {
      await tx.$queryRawUnsafe(WAKE_SQL, WAKE_CHANNEL, name);
      return;
    }
    await this.db.sql.query(WAKE_SQL, [WAKE_CHANNEL, name]);
  }
  wakeLocal(name) {
    for (const workerId of this.pollers.get(name) ?? []) this.boss.notifyWorker(workerId);
  }
  /**
   * Starts `concurrency` pollers for the queue. Each takes up to `batchSize` jobs at a time and runs them
   * side by side; a job whose handler throws is failed on its own (retries and the dead letter apply to it
   * alone) and the rest complete. A poller that just finished asks again at once: pg-boss otherwise sleeps out
   * its polling interval after every fetch, which caps a poller at two fetches a second however short the jobs
   * are (a webhook delivery is a few milliseconds). A job committed anywhere wakes the idle pollers of its queue
   * at once (queue-wakeup.ts): the polling interval is only the fallback.
   */
  async work(name, concurrency, handler, options = {}) {
    const batchSize = options.batchSize ?? 1;
    const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 0.5;
    for (let i = 0; i < concurrency; i++) {
      let workerId = "";
      workerId = await this.boss.work(name, { batchSize, pollingIntervalSeconds, includeMetadata: true }, async (jobs) => {
        if (!jobs.length) return;
        try {
          if (jobs.length === 1) {
            const [job] = jobs;
            await handler(job.data, { id: job.id, attempt: job.retryCount });
            return;
          }
          const outcomes = await Promise.allSettled(jobs.map((job) => handler(job.data, { id: job.id, attempt: job.retryCount })));
          for (const [index, outcome] of outcomes.entries()) {
            if (outcome.status === "fulfilled") continue;
            const reason = outcome.reason;
            await this.boss.fail(name, jobs[index].id, { message: reason?.message ?? String(reason) });
          }
        } finally {
          this.boss.notifyWorker(workerId);
        }
      });
      this.pollers.set(name, [...this.pollers.get(name) ?? [], workerId]);
    }
    this.listener ??= listenForJobs(this.db, this.log, (queue) => this.wakeLocal(queue));
    await this.listener;
  }
  /**
   * Jobs waiting (created or waiting to retry) and running, per defined queue, counted now: pg-boss's own
   * queue statistics are refreshed only every monitor interval. For the operator's /metrics.
   */
  async depths() {
    const names = [...this.definitions.keys()];
    const { rows } = await this.db.sql.query(
      `SELECT name, count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting, count(*) FILTER (WHERE state = 'active')::int AS active
       FROM pgboss.job WHERE name = ANY($1::text[]) AND state IN ('created', 'retry', 'active') GROUP BY name`,
      [names]
    );
    return names.map((queue) => {
      const row = rows.find((r) => r.name === queue);
      return { queue, waiting: row?.waiting ?? 0, active: row?.active ?? 0 };
    });
  }
  /**
   * Puts every job marked active back for retry at once (as a failed attempt: retries and the dead letter
   * apply). Only for a database no other process can be working on, i.e. the embedded one at start: every
   * active job there belonged to a process that died, and would otherwise wait out its whole lease.
   */
  async reclaimActiveJobs() {
    const { rows } = await this.db.sql.query(`SELECT name, id FROM pgboss.job WHERE state = 'active'`);
    const byQueue = /* @__PURE__ */ new Map();
    for (const row of rows) byQueue.set(row.name, [...byQueue.get(row.name) ?? [], row.id]);
    for (const [name, ids] of byQueue) {
      await this.boss.fail(name, ids);
      this.log.warn({ queue: name, jobs: ids.length }, "jobs left active by a stopped process put back for retry");
    }
    return rows.length;
  }
  async getJob(name, id) {
    return this.boss.getJobById(name, id);
  }
  /** Runs at stop() before the pollers stop: producers tied to the workers' lifetime (the schedule ticker) end first. */
  onStop(hook) {
    this.stopHooks.push(hook);
  }
  /** Waits for running handlers up to `timeoutMs`, then stops polling. */
  async stop(timeoutMs) {
    if (!this.started) return;
    this.started = false;
    await Promise.all(this.stopHooks.splice(0).map((hook) => hook()));
    const listener = this.listener;
    this.listener = void 0;
    this.pollers.clear();
    await (await listener?.catch(() => void 0))?.close();
    await this.boss.stop({ graceful: true, wait: true, timeout: timeoutMs, close: false });
  }
};

// src/ops/embedded-seed.ts
async function main(out) {
  if (!out) throw new Error("usage: embedded-seed <output file>");
  const db = await openDatabase({});
  try {
    await db.migrate();
    const queue = new JobQueue(db, createLogger("silent"));
    await queue.start();
    await queue.stop(1e3);
    const dump = await db.embedded.dump();
    writeFileSync(out, Buffer.from(await dump.arrayBuffer()), { mode: 420 });
  } finally {
    await db.close();
  }
}
main(process.argv[2]).catch((error) => {
  process.stderr.write(`embedded-seed failed: ${error instanceof Error ? error.message : String(error)}
`);
  process.exit(1);
});
//# sourceMappingURL=embedded-seed.js.map
