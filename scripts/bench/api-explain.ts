// npm run bench:api-explain: the SQL the large-workspace requests of bench:api send, with PostgreSQL's plan and
// time for each statement, on the large (20,000 assets, 100,000 findings) and the 1,000-row workspace. For
// checking indexes with EXPLAIN: the services are called in-process (no HTTP), Prisma's statements are recorded
// with their parameters and replayed under EXPLAIN (ANALYZE, BUFFERS) on a fresh database (dropped at the end).
//   BENCH_DATABASE_URL  admin URL of the local server (default postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_EXPLAIN       all: print every plan (default: only statements slower than 2 ms on the large workspace)
import { openDatabase } from '../../src/db.js';
import { createServiceContext, type AppDeps } from '../../src/context.js';
import { listAssets } from '../../src/modules/assets/service.js';
import { findingStatistics, listFindings } from '../../src/modules/vulnerabilities/service.js';
import { listTargets } from '../../src/modules/targets/service.js';
import { listWorkspaces } from '../../src/modules/workspaces/service.js';
import { createAuthCache } from '../../src/auth/auth-cache.js';
import { createDatabase, loadAverage, runMain } from './api-lib.js';
import { seed, withClient } from './seed.js';
import { seedApiData } from './api-seed.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const ALL = process.env.BENCH_EXPLAIN === 'all';
const OWNER = 'bench-explain-owner';

type Call = (ctx: ReturnType<typeof createServiceContext>, workspaceId: string) => Promise<unknown>;
const REQUESTS: Array<[string, Call]> = [
  ['assets list', (ctx, ws) => listAssets(ctx, ws, { limit: 20 } as never)],
  ['assets kind=host&enabled', (ctx, ws) => listAssets(ctx, ws, { limit: 20, kind: 'host', enabled: true } as never)],
  ['assets search=a12', (ctx, ws) => listAssets(ctx, ws, { limit: 20, search: 'a12' } as never)],
  ['findings list (open)', (ctx, ws) => listFindings(ctx, ws, { limit: 20 } as never)],
  ['findings severity=high', (ctx, ws) => listFindings(ctx, ws, { limit: 20, severity: ['high'] } as never)],
  ['findings page 50', (ctx, ws) => listFindings(ctx, ws, { limit: 20, page: 50, status: 'all' } as never)],
  ['findings statistics', (ctx, ws) => findingStatistics(ctx, ws, {})],
  ['targets (with counts)', (ctx, ws) => listTargets(ctx, ws, { limit: 20 } as never)],
  // Not per workspace: the owner's 1,000 (the same page twice).
  ['workspaces list', (ctx) => listWorkspaces(ctx, { page: 1, limit: 20 } as never)],
];

async function main(): Promise<void> {
  const url = await createDatabase(ADMIN_URL);
  const db = await openDatabase({ url, logQueries: true, poolSize: 2 });
  try {
    await db.migrate();
    await withClient(url, (client) =>
      client.query(
        `INSERT INTO "user" (id, name, email, "emailVerified", role, "createdAt", "updatedAt") VALUES ($1, 'Owner', 'owner@example.com', true, 'user', now(), now())`,
        [OWNER],
      ),
    );
    await seed(url, OWNER);
    const data = await withClient(url, (client) => seedApiData(client, OWNER));
    const recorded: Array<{ query: string; params: string }> = [];
    db.prisma.$on('query' as never, (event: { query: string; params: string }) => recorded.push(event));
    // Every membership looked up, as on a cold request.
    const deps = { prisma: db.prisma, db, authCache: createAuthCache({ ttlMs: 0 }) } as unknown as AppDeps;
    const viewer = { id: OWNER, name: 'Owner', email: 'owner@example.com', image: null, role: 'user' as const, via: 'session' as const };
    console.log(`load average ${loadAverage()}`);
    for (const [label, call] of REQUESTS) {
      for (const [size, workspaceId] of [
        ['large', data.largeWorkspaceId],
        ['1,000 rows', data.smallWorkspaceId],
      ] as const) {
        recorded.length = 0;
        await call(createServiceContext(deps, { viewer, requestId: 'explain', clientIp: '127.0.0.1' }), workspaceId);
        const statements = [...recorded];
        let total = 0;
        const lines: string[] = [];
        for (const { query, params } of statements) {
          const plan = await withClient(url, (client) => client.query(`EXPLAIN (ANALYZE, BUFFERS) ${query}`, JSON.parse(params) as unknown[]));
          const text = (plan.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']);
          const ms = Number(/Execution Time: ([\d.]+)/.exec(text.at(-1) ?? '')?.[1] ?? 0);
          total += ms;
          if (ALL || (size === 'large' && ms > 2))
            lines.push(`    ${ms.toFixed(1)} ms  ${query}\n      params ${params}\n${text.map((line) => `      | ${line}`).join('\n')}`);
          else lines.push(`    ${ms.toFixed(1)} ms  ${query.slice(0, 140)}`);
        }
        console.log(`${label} (${size}): ${statements.length} statements, ${total.toFixed(1)} ms executing`);
        if (size === 'large' || ALL) console.log(lines.join('\n'));
      }
    }
  } finally {
    await db.close();
  }
}

runMain(main);
