/**
 * How much of a nuclei template library the engine can load: per protocol, per top-level folder and per
 * http/ folder, how many templates load with no warning, with warnings (by cause) and are rejected.
 * Each file is judged as an upload is (size limit, YAML shape limits, parseTemplate), in-process.
 *
 *   npm run templates:coverage -- <folder> [--json]
 *
 * - Every *.yaml / *.yml file under the folder is read (dot-folders skipped); a file without top-level `id`
 *   and `info` (payload lists, helpers) is not a template and only counted as such.
 * - Protocol: the template's request-block keys as nuclei names them (`requests` counts as http, `tcp` as
 *   network, `workflows` as workflow); a template with blocks of several protocols counts once, as "multi".
 * - Causes are the engine's messages with template-specific parts stripped; a template counts once per cause.
 * - Payload files (`payloads: {x: helpers/wordlists/y.txt}`) are looked up as nuclei looks them up on disk and as
 *   an import of the library finds them in its archive: the template's folder, then each folder above it (so
 *   `<library>/http` finds `<library>/helpers`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { payloadFileProblem, type PayloadFileReader } from '../src/scanner/nuclei/index.js';
import { fileURLToPath } from 'node:url';
import { classifyFile } from './templates-coverage/classify.js';
import { buildReport, type CoverageReport, type FileOutcome, formatReport } from './templates-coverage/report.js';

const USAGE = 'usage: npm run templates:coverage -- <folder> [--json]';

/** Every *.yaml / *.yml file under `dir`, sorted, skipping dot-folders (.github, .git). */
function yamlFiles(dir: string): string[] {
  const found: string[] = [];
  const pending = [dir];
  while (pending.length) {
    const current = pending.pop()!;
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.')) pending.push(path);
      } else if (entry.isFile() && /\.ya?ml$/i.test(entry.name)) found.push(path);
    }
  }
  return found.sort();
}

/** nuclei's helper-file lookup from a template's folder upwards; references that would leave a library are refused first. */
function payloadReader(templatePath: string): PayloadFileReader {
  return (reference) => {
    if (payloadFileProblem(reference)) return undefined;
    for (let dir = dirname(templatePath); ; dir = dirname(dir)) {
      const candidate = join(dir, reference);
      if (existsSync(candidate) && statSync(candidate).isFile()) return readFileSync(candidate, 'utf8');
      if (dirname(dir) === dir) return undefined;
    }
  };
}

export function measureCoverage(folder: string): CoverageReport {
  const started = performance.now();
  const root = resolve(folder);
  const outcomes: FileOutcome[] = yamlFiles(root).map((path) => ({
    relativePath: relative(root, path).split(sep).join('/'),
    classified: classifyFile(readFileSync(path, 'utf8'), payloadReader(path)),
  }));
  return buildReport(folder, outcomes, Math.round(performance.now() - started));
}

/** The CLI: prints the report (tables, or JSON with --json) and returns the exit code. */
export function main(
  args: string[],
  write: (text: string) => void = (text) => process.stdout.write(text),
  writeError: (text: string) => void = (text) => process.stderr.write(text),
): number {
  const json = args.includes('--json');
  const folders = args.filter((a) => a !== '--json' && a !== '--');
  if (folders.length !== 1 || folders[0]!.startsWith('-')) {
    writeError(`${USAGE}\n`);
    return 2;
  }
  let report: CoverageReport;
  try {
    report = measureCoverage(folders[0]!);
  } catch (error) {
    writeError(`templates:coverage: ${(error as Error).message}\n${USAGE}\n`);
    return 1;
  }
  write(json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
