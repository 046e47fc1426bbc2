// The community workload of bench:templates: templates of the public nuclei library's http/ folder, read straight from
// the archive in ../shared/data (the same reader the import endpoint uses), kept when they load with no warning, then
// spread evenly over the folders (every k-th by path) so CVEs, exposures, misconfigurations and technology checks
// all take part. The folders that target third-party sites (osint, token-spray, credential-stuffing) are left out, as
// in the coverage goal. Absent archive (a clone without ../shared): the workload is skipped, saying so.
import { createReadStream, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { archiveEntries } from '../../src/modules/templates/archive.js';
import { parseTemplate, type NucleiTemplate } from '../../src/scanner/nuclei/index.js';
import { templateUsesOast } from '../../src/scanner/nuclei/oast.js';

const ARCHIVE_CANDIDATES = [
  resolve(import.meta.dirname, '../../../shared/data/nuclei-templates-a64f60e.tar.gz'),
  '/work/shared/data/nuclei-templates-a64f60e.tar.gz',
];
const THIRD_PARTY = /\/http\/(osint|token-spray|credential-stuffing)\//;
const LIMITS = { maxBytes: 512 * 1024 * 1024, maxEntries: 200_000, maxExpandedBytes: 2 * 1024 * 1024 * 1024 };

export interface CommunityTemplates {
  archive: string;
  /** http/ templates read (outside the third-party folders). */
  read: number;
  /** Of those, the ones that load with no warning. */
  clean: number;
  templates: { path: string; template: NucleiTemplate }[];
}

export function communityArchive(): string | undefined {
  return ARCHIVE_CANDIDATES.find((path) => existsSync(path));
}

export async function loadCommunityTemplates(archive: string, count: number): Promise<CommunityTemplates> {
  const clean: { path: string; template: NucleiTemplate }[] = [];
  let read = 0;
  for await (const entry of archiveEntries(createReadStream(archive), 'tar.gz', LIMITS)) {
    if (entry.kind !== 'file' || !/\/http\/.+\.ya?ml$/.test(`/${entry.path}`) || THIRD_PARTY.test(`/${entry.path}`)) continue;
    read += 1;
    const { template, errors, warnings } = parseTemplate((await entry.read(entry.size + 1)).toString('utf8'));
    // Templates that wait for OAST callbacks or run once per scan (self-contained) are another workload: left out,
    // so the figures stay comparable with the runs before those features.
    if (template && !errors.length && !warnings.length && !templateUsesOast(template) && !template.requests.some((block) => block.selfContained)) {
      clean.push({ path: entry.path, template });
    }
  }
  clean.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const step = Math.max(1, clean.length / count);
  const picked: { path: string; template: NucleiTemplate }[] = [];
  for (let i = 0; picked.length < Math.min(count, clean.length); i += 1) picked.push(clean[Math.floor(i * step)]!);
  return { archive, read, clean: clean.length, templates: picked };
}
