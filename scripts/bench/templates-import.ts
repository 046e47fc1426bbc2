// npm run bench:templates-import [-- <archive.tar.gz|.zip>]: how long importing a whole nuclei template library takes.
//
// Default archive: ../shared/data/nuclei-templates-a64f60e.tar.gz (the public library's http/, dns/, ssl/, network/,
// workflows/ and helpers/ folders, about 10,800 templates). One run, the real app (startTestApp: PGlite, or a fresh
// PostgreSQL database when TEST_DATABASE_URL is set, as in the tests), over HTTP as a user would:
//  1. judge only: the archive read and every template checked (content.ts) in this process, nothing stored: the
//     floor the import cannot go below;
//  2. first import into an empty workspace (every template created: rows, blobs, one transaction);
//  3. the same archive again (every template unchanged: hashed, not parsed, nothing written);
//  4. the same archive into a workspace whose templates all differ by one byte (every template updated).
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync, gzipSync } from 'node:zlib';
import { archiveEntries, type ArchiveFormat } from '../../src/modules/templates/archive.js';
import { ArchiveHelperFiles } from '../../src/modules/templates/import-files.js';
import { judgeContent, judgeEntry } from '../../src/modules/templates/import-judge.js';
import { importLimits } from '../../src/modules/templates/import.js';
import { startTestApp } from '../../test/support/app.js';
import { clientFor } from '../../test/support/client.js';

const DEFAULT_ARCHIVE = resolve(import.meta.dirname, '../../../shared/data/nuclei-templates-a64f60e.tar.gz');
const FALLBACK_ARCHIVE = '/work/shared/data/nuclei-templates-a64f60e.tar.gz';
const out = (line = '') => process.stdout.write(`${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function archivePath(): string {
  const given = process.argv.slice(2).find((arg) => arg !== '--');
  const path = given ?? (existsSync(DEFAULT_ARCHIVE) ? DEFAULT_ARCHIVE : FALLBACK_ARCHIVE);
  if (!existsSync(path)) throw new Error(`no archive at ${path}: pass one (npm run bench:templates-import -- <archive.tar.gz|.zip>)`);
  return path;
}

/**
 * The same tar with one byte appended to every template (a comment line): every stored template then differs.
 * Rewritten block by block: tar sizes are in the headers, so the file's blocks are re-padded.
 */
function touchedTarGz(bytes: Buffer): Buffer {
  const tar = gunzipSync(bytes);
  const blocks: Buffer[] = [];
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = Buffer.from(tar.subarray(offset, offset + 512));
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(header.subarray(124, 136).toString('ascii').replace(/\0.*$/, '').trim() || '0', 8);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/, '');
    let data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (header[156] === 0x30 /* '0' */ && /\.ya?ml$/.test(name)) {
      data = Buffer.concat([data, Buffer.from('\n#\n')]);
      header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
      header.fill(' ', 148, 156);
      let sum = 0;
      for (const byte of header) sum += byte;
      header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    }
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

async function judgeOnly(path: string, format: ArchiveFormat): Promise<{ ms: number; judged: number }> {
  const started = performance.now();
  let judged = 0;
  // as import.ts: helper files kept, templates with payloads judged once the archive has been read
  const helpers = new ArchiveHelperFiles();
  const deferred: { path: string; content: string }[] = [];
  for await (const entry of archiveEntries(createReadStream(path), format, importLimits(512 * 1024 * 1024))) {
    const verdict = await judgeEntry(entry, new Map(), helpers);
    if (verdict.kind === 'deferred') deferred.push(verdict);
    else if (verdict.kind !== 'skip') judged += 1;
  }
  for (const entry of deferred) if (judgeContent(entry.path, entry.content, helpers).kind !== 'skip') judged += 1;
  return { ms: performance.now() - started, judged };
}

async function main() {
  const path = archivePath();
  const format: ArchiveFormat = path.endsWith('.zip') ? 'zip' : 'tar.gz';
  const bytes = readFileSync(path);
  out(`# Template import: ${path} (${(statSync(path).size / 1024 / 1024).toFixed(1)} MiB, ${format})`);
  out();
  const judge = await judgeOnly(path, format);
  out(`judge only, one thread (read + check every template, no storage): ${judge.judged} files in ${seconds(judge.ms)}`);

  const server = await startTestApp({ TEMPLATE_IMPORT_MAX_BYTES: String(256 * 1024 * 1024) });
  try {
    const client = clientFor(server);
    const owner = await client.signUp('Bench');
    const post = async (workspaceId: string, body: Buffer) => {
      const started = performance.now();
      const response = await fetch(`${server.url}/api/v1/api/templates/import`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${owner.token}`,
          'x-workspace-id': workspaceId,
          'content-type': format === 'zip' ? 'application/zip' : 'application/gzip',
        },
        body: new Uint8Array(body),
      });
      const answer = (await response.json()) as { totals?: Record<string, number>; message?: string };
      if (response.status !== 200) throw new Error(`import answered ${response.status}: ${answer.message}`);
      return { ms: performance.now() - started, totals: answer.totals! };
    };
    const workspace = (await client.createWorkspace(owner)).id;
    const first = await post(workspace, bytes);
    out(`first import (all created):        ${seconds(first.ms)}  ${JSON.stringify(first.totals)}`);
    const again = await post(workspace, bytes);
    out(`same archive again (all unchanged): ${seconds(again.ms)}  ${JSON.stringify(again.totals)}`);
    if (format === 'tar.gz') {
      const touched = await post(workspace, touchedTarGz(bytes));
      out(`every template changed (updated):   ${seconds(touched.ms)}  ${JSON.stringify(touched.totals)}`);
    }
    out();
    out(`database: ${server.databaseUrl ? 'PostgreSQL' : 'PGlite (embedded)'}; storage: local files`);
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
