import pkg from '../../../package.json' with { type: 'json' };
import type { AppDeps } from '../../context.js';
import type { ToolCategory } from './schemas.js';

export interface BuiltinTool {
  name: string;
  category: ToolCategory;
  description: string;
}

/** The scan steps (and the template engine) as catalogue entries. Names are stable: they are API identifiers. */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [
  {
    name: 'discovery',
    category: 'subdomain_discovery',
    description:
      'Finds host names under domain targets: wordlist brute force with wildcard detection, certificate transparency, DNS records and zone transfers, permutations, and pivots from certificates, links and CNAMEs.',
  },
  { name: 'dns', category: 'dns', description: 'Resolves host names to their A, AAAA and CNAME records; IP literals pass through.' },
  { name: 'ports', category: 'port_scanner', description: 'TCP connect scan of the chosen ports, with banner grabbing and service guesses.' },
  { name: 'http', category: 'http_probe', description: 'Probes web endpoints on open ports: status, title, headers, redirects and technologies.' },
  { name: 'tls', category: 'tls', description: 'Reads the certificate each TLS endpoint presents: subject, SANs, issuer, validity and trust.' },
  {
    name: 'checks',
    category: 'vulnerability_scanner',
    description: 'Built-in checks over web endpoints and certificates (exposed .git, missing headers, expired certificates, ...).',
  },
  {
    name: 'nuclei-templates',
    category: 'vulnerability_scanner',
    description: 'The native nuclei template engine: runs HTTP nuclei templates against web endpoints.',
  },
];

export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set(BUILTIN_TOOLS.map((tool) => tool.name));

/** Built-in tools carry the version of this release. */
export const BUILTIN_TOOL_VERSION: string = pkg.version;

/** Any constant works: it only has to be the same in every process of this instance. */
const CATALOGUE_LOCK = 7_303_001;

/**
 * Creates or refreshes the built-in tools; run at every start after migrations. Two processes may start at
 * once: `@@unique([workspaceId, name])` does not hold for NULL workspaceId in PostgreSQL, so a transaction
 * advisory lock serialises them and the second one finds the rows the first created.
 */
export async function ensureBuiltinTools(deps: Pick<AppDeps, 'prisma' | 'log'>): Promise<void> {
  const created = await deps.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CATALOGUE_LOCK}::bigint)`;
    const existing = await tx.tool.findMany({ where: { builtin: true, workspaceId: null }, orderBy: { createdAt: 'asc' } });
    const names: string[] = [];
    // Lists sort tools by creation time: one millisecond apart, the built-ins list in pipeline order (created within
    // the same millisecond, they would fall back to name order).
    const start = Date.now();
    for (const [index, tool] of BUILTIN_TOOLS.entries()) {
      const row = existing.find((candidate) => candidate.name === tool.name);
      const fields = { category: tool.category, description: tool.description, version: BUILTIN_TOOL_VERSION };
      if (!row) {
        await tx.tool.create({ data: { ...fields, name: tool.name, builtin: true, workspaceId: null, createdAt: new Date(start + index) } });
        names.push(tool.name);
      } else if (row.category !== fields.category || row.description !== fields.description || row.version !== fields.version) {
        await tx.tool.update({ where: { id: row.id }, data: fields });
      }
    }
    return names;
  });
  if (created.length) deps.log.info({ tools: created }, 'built-in tools registered');
}
