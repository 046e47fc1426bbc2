// Files that ship beside the code and are read at run time (migrations, the template pack, the wordlist, the
// template worker's entry) are found from the project root, not from the module that reads them: compiled, the
// server is one bundle (dist/src/main.js), so a module's own location does not say where its files are. dist/
// mirrors the root (scripts/build.mjs), so one root-relative path holds from source (tsx) and from dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest directory above this module with a package.json: the repository, or dist/ (which has a copy). */
function findProjectRoot(): string {
  const self = fileURLToPath(import.meta.url);
  for (let dir = dirname(self); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json in any directory above ${self}`);
  }
}

export const projectRoot = findProjectRoot();

/** The absolute path of a file shipped with the code, from its path relative to the project root. */
export function shippedPath(relative: string): string {
  return join(projectRoot, relative);
}
