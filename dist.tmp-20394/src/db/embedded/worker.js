import { createRequire as __perimeterCreateRequire } from 'node:module'; const require = __perimeterCreateRequire(import.meta.url);

// src/db/embedded/worker.ts
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
var PROTOCOL_3 = 196608;
var SSL_REQUEST = 80877103;
var CANCEL_REQUEST = 80877102;
var TERMINATE = 88;
var NO_SSL = new Uint8Array([78]);
var port = parentPort;
if (!port) throw new Error("src/db/embedded/worker.ts runs as a worker thread (thread.ts starts it)");
var send = (message, transfer = []) => port.postMessage(message, transfer);
var options = workerData;
var db;
try {
  db = await PGlite.create({ dataDir: options.dataDir, loadDataDir: options.loadDataDir });
} catch (error) {
  send({ type: "failed", message: error.message ?? String(error) });
  await new Promise(() => void 0);
}
var partial = /* @__PURE__ */ new Map();
var opened = 0;
var tail = Promise.resolve();
var serially = (work) => {
  tail = tail.then(work).catch(fatal);
};
function fatal(error) {
  send({ type: "fatal", message: error?.message ?? String(error) });
  process.exit(1);
}
async function resetSession() {
  if (db.isInTransaction()) await db.exec("ROLLBACK");
  await db.exec("DEALLOCATE ALL");
}
function* messages(connection, bytes) {
  const carried = partial.get(connection);
  let buffer = carried ? Buffer.concat([carried, bytes]) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  partial.delete(connection);
  while (buffer.length >= 5) {
    const second = buffer.length >= 8 ? buffer.readInt32BE(4) : -1;
    const untyped = second === PROTOCOL_3 || second === SSL_REQUEST || second === CANCEL_REQUEST;
    const length = untyped ? buffer.readInt32BE(0) : 1 + buffer.readInt32BE(1);
    if (buffer.length < length) break;
    yield { start: untyped, code: untyped ? second : buffer[0], body: buffer.subarray(0, length) };
    buffer = buffer.subarray(length);
  }
  if (buffer.length) partial.set(connection, Uint8Array.from(buffer));
}
async function answer(connection, bytes) {
  const out = [];
  let size = 0;
  const keep = (data) => {
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
  send({ type: "wire", connection, bytes: reply }, [reply.buffer]);
}
async function closeConnection(connection) {
  partial.delete(connection);
  if (db.isInTransaction()) await db.exec("ROLLBACK");
}
port.on("message", (message) => {
  switch (message.type) {
    case "wire":
      return serially(() => answer(message.connection, message.bytes));
    case "open":
      return serially(async () => {
        if (opened++ > 0) await resetSession();
      });
    case "end":
      return serially(() => closeConnection(message.connection));
    case "dump":
      return serially(async () => {
        try {
          send({ type: "dumped", request: message.request, archive: await db.dumpDataDir("gzip") });
        } catch (error) {
          send({ type: "dumped", request: message.request, error: error.message });
        }
      });
    case "close":
      return serially(async () => {
        await db.close();
        send({ type: "closed" });
        port.close();
      });
  }
});
send({ type: "ready" });
//# sourceMappingURL=worker.js.map
