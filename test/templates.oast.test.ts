import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisUrl, startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan, uploadTemplate, waitForScan, type Client } from './support/scans.js';
import { OAST_DOMAIN, startOast, startVictim, type OastFixture, type VictimServer } from './oast/fixtures.js';

/**
 * A scan with an OAST template through the REST API: with OAST_DOMAIN set, the checks step gives the template a
 * URL on the self-hosted listeners, the loopback "vulnerable" site resolves it, and the interaction makes the
 * finding. Without OAST_DOMAIN the same template is skipped with the reason, and the site sees no OAST URL.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };

const OAST_TEMPLATE = `id: oast-ssrf
info:
  name: Blind SSRF through the url parameter
  author: tests
  severity: high
http:
  - method: GET
    path: ["{{BaseURL}}/dns?url=http://{{interactsh-url}}/"]
    matchers-condition: and
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["dns"]
      - type: status
        status: [200]
`;

let oast: OastFixture;
let victim: VictimServer;
const apps: TestApp[] = [];

beforeAll(async () => {
  // the listeners are started on the app's pub/sub below; the victim needs their ports
  apps.push(await startTestApp({ ...LOOPBACK_ONLY, OAST_DOMAIN, OAST_COOLDOWN_MS: '1500' }));
  oast = await startOast({ pubsub: apps[0].app.deps.pubsub });
  victim = await startVictim(oast.service);
  apps.push(await startTestApp(LOOPBACK_ONLY));
});

afterAll(async () => {
  for (const app of apps) await app.stop();
  await oast?.stop();
  await victim?.close();
});

async function scanWithTemplate(server: TestApp, name: string) {
  const client: Client = clientFor(server);
  const owner: TestUser = await client.signUp(name);
  const workspaceId = (await client.createWorkspace(owner)).id;
  const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
  await uploadTemplate(client, owner, workspaceId, 'oast-ssrf.yaml', OAST_TEMPLATE);
  const port = new URL(victim.baseUrl).port;
  const started = await startScan(client, owner, workspaceId, target.id, { ports: port, timeoutMs: 5_000, templateSelection: { includeIds: ['oast-ssrf'] } });
  const done = await waitForScan(client, owner, workspaceId, started.id);
  expect(done.status).toBe('COMPLETED');
  const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: started.id, name: 'checks' } });
  const findings = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: owner, workspaceId });
  expect(findings.status).toBe(200);
  return { step, output: step.output as { checkIds: string[]; skippedTemplates: { templateId: string; reason: string }[] }, findings: findings.body };
}

describe('scans with OAST templates', { timeout: 240_000 }, () => {
  it('finds what only an out-of-band callback shows when OAST_DOMAIN is set', async () => {
    const before = victim.seen.length;
    const { output, findings } = await scanWithTemplate(apps[0], 'Oastowner');
    expect(output.skippedTemplates).toEqual([]);
    expect(output.checkIds).toContain('oast-ssrf');
    const seen = victim.seen.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^[a-z0-9]{33}\.oast\.test$/);
    const found = (findings.data as { checkId: string; source: string; severity: string; status: string; evidence: { url: string } }[]).filter(
      (f) => f.source === 'nuclei',
    );
    expect(found.map((f) => [f.checkId, f.severity, f.status])).toEqual([['oast-ssrf', 'high', 'open']]);
    expect(found[0].evidence.url).toBe(`${victim.baseUrl}/dns?url=http://${seen[0]}/`);
    // the callback went to our listener, which forgot nothing it should not: the step's id is dropped at its end
    expect(oast.service.registry.match(seen[0])).toBeUndefined();
  });

  it('skips the template with the reason when OAST_DOMAIN is not set', async () => {
    const before = victim.seen.length;
    const { output, step, findings } = await scanWithTemplate(apps[1], 'Nooast');
    expect(output.skippedTemplates).toEqual([{ templateId: 'oast-ssrf', reason: 'interactsh (OAST) needs OAST_DOMAIN' }]);
    expect(step.error).toContain('oast-ssrf (interactsh (OAST) needs OAST_DOMAIN)');
    expect(victim.seen.length).toBe(before);
    expect((findings.data as { checkId: string }[]).map((f) => f.checkId)).not.toContain('oast-ssrf');
  });

  it.skipIf(Boolean(redisUrl))('skips it when the step cannot reach the listeners: no Redis and none in its process', async () => {
    await oast.stop();
    apps.push(await startTestApp({ ...LOOPBACK_ONLY, OAST_DOMAIN }));
    const { output, step } = await scanWithTemplate(apps[2], 'Farawayoast');
    const reason = 'interactsh (OAST) needs REDIS_URL in worker processes to reach the OAST listeners';
    expect(output.skippedTemplates).toEqual([{ templateId: 'oast-ssrf', reason }]);
    expect(step.error).toContain(reason);
  });
});
