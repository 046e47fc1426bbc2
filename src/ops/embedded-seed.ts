// `node dist/src/ops/embedded-seed.js <file>`: writes the embedded database's starting point, a gzipped PGlite
// data directory with every migration applied and the job queue's schema created, which `npm run build` ships as dist/embedded-db.tar.gz.
//
// Why: a first start on a fresh DATA_DIR spent most of its time in PGlite's initdb (WebAssembly), far more than in
// the migrations. Unpacking a prepared directory is several times faster. The dump is rebuilt whenever a migration
// changes (the build's fingerprint covers prisma/migrations), and the migration runner still applies anything the
// dump lacks, so a stale one costs time, never correctness.
import { writeFileSync } from 'node:fs';
import { openDatabase } from '../db.js';
import { createLogger } from '../logger.js';
import { JobQueue } from '../queue.js';

async function main(out: string | undefined): Promise<void> {
  if (!out) throw new Error('usage: embedded-seed <output file>');
  const db = await openDatabase({});
  try {
    await db.migrate();
    // pg-boss's schema too: creating it is the next slowest part of a first start.
    const queue = new JobQueue(db, createLogger('silent'));
    await queue.start();
    await queue.stop(1000);
    const dump = await db.embedded!.dump();
    writeFileSync(out, Buffer.from(await dump.arrayBuffer()), { mode: 0o644 });
  } finally {
    await db.close();
  }
}

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`embedded-seed failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
