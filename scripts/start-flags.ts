// The Node flags `npm start` and `npm run worker` run the app with, read from package.json's scripts: the
// benchmarks and the build test start the app with `node` directly and must run it as production does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The `--` options between `node` and the entry file of a package.json script (`start` unless told). */
export function startFlags(packageDir: string, script: 'start' | 'worker' = 'start'): string[] {
  const { scripts } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const words = (scripts?.[script] ?? '').trim().split(/\s+/);
  if (words[0] !== 'node') return [];
  const flags: string[] = [];
  for (const word of words.slice(1)) {
    if (!word.startsWith('--')) break;
    flags.push(word);
  }
  return flags;
}
