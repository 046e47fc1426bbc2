import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan, uploadTemplate, waitForScan, type Client } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * Choosing what runs: workspace settings and scan options select templates by id, tag, severity, author and
 * protocol, with exclusions, and switch the default pack off. Each template asks the loopback server for a path
 * of its own, so the server's log says exactly which ones ran in each scan.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };

function httpTemplate(id: string, fields: { tags: string; severity: string; author: string }): string {
  return `id: ${id}
info:
  name: ${id}
  author: ${fields.author}
  severity: ${fields.severity}
  tags: ${fields.tags}
http:
  - method: GET
    path: ["{{BaseURL}}/${id}"]
    matchers:
      - type: word
        words: ["never-present-marker"]
`;
}

/** A network template speaking HTTP/1.0 to the same service: its request shows up in the server's log too. */
const SEL_NET = `id: sel-net
info:
  name: sel-net
  author: dave
  severity: medium
  tags: net
tcp:
  - host: ["{{Hostname}}"]
    inputs:
      - data: "GET /sel-net HTTP/1.0\\r\\n\\r\\n"
    read-size: 64
    matchers:
      - type: word
        words: ["never-present-marker"]
`;

const OWN = ['sel-alpha', 'sel-beta', 'sel-gamma', 'sel-net'];
/** Paths of the default pack that tell it ran (exposed-env-file, git-config). */
const PACK_PATHS = ['/.env', '/.git/config'];

let server: TestApp;
let client: Client;
let site: { port: number; close(): Promise<void> };
const hits: string[] = [];

beforeAll(async () => {
  site = await listen(
    http.createServer((req, res) => {
      hits.push(new URL(req.url ?? '/', 'http://x').pathname);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    }),
  );
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await site?.close();
});

describe('template selection', { timeout: 240_000 }, () => {
  let owner: TestUser;
  let workspaceId: string;
  let targetId: string;

  beforeAll(async () => {
    owner = await client.signUp('Selector');
    workspaceId = (await client.createWorkspace(owner)).id;
    targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    await uploadTemplate(client, owner, workspaceId, 'sel-alpha.yaml', httpTemplate('sel-alpha', { tags: 'alpha,web', severity: 'high', author: 'alice' }));
    await uploadTemplate(client, owner, workspaceId, 'sel-beta.yaml', httpTemplate('sel-beta', { tags: 'beta', severity: 'low', author: 'Bob,erin' }));
    await uploadTemplate(client, owner, workspaceId, 'sel-gamma.yaml', httpTemplate('sel-gamma', { tags: 'alpha', severity: 'info', author: 'carol' }));
    await uploadTemplate(client, owner, workspaceId, 'sel-net.yaml', SEL_NET);
  });

  function setWorkspaceSelection(selection: Record<string, unknown>) {
    return client.api('PATCH', `/api/v1/api/workspaces/${workspaceId}/template-settings`, { as: owner, body: { selection } });
  }

  /** Runs a scan of the site with these options; answers which of our templates asked for their path, and whether the pack ran. */
  async function ranWith(templateSelection?: Record<string, unknown>) {
    hits.length = 0;
    const options = { ports: String(site.port), timeoutMs: 5_000, ...(templateSelection ? { templateSelection } : {}) };
    const scan = await startScan(client, owner, workspaceId, targetId, options);
    const done = await waitForScan(client, owner, workspaceId, scan.id);
    expect(done.status).toBe('COMPLETED');
    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: scan.id, name: 'checks' } });
    const output = step.output as { checkIds: string[]; serviceCheckIds: string[] };
    const ran = OWN.filter((id) => hits.includes(`/${id}`));
    // What the step says ran is what the server saw.
    expect([...output.checkIds, ...output.serviceCheckIds].filter((id) => OWN.includes(id)).sort()).toEqual(ran);
    const pack = PACK_PATHS.every((path) => hits.includes(path));
    if (!pack) for (const path of PACK_PATHS) expect(hits).not.toContain(path);
    return { ran, pack, scan };
  }

  it('runs everything enabled by default, the pack included', async () => {
    expect(await ranWith()).toMatchObject({ ran: OWN, pack: true });
  });

  it('filters by tag, id, severity, author and protocol, and applies exclusions', async () => {
    expect(await ranWith({ includeTags: ['ALPHA'] })).toMatchObject({ ran: ['sel-alpha', 'sel-gamma'], pack: false });
    expect(await ranWith({ includeIds: ['sel-beta', 'sel-net'] })).toMatchObject({ ran: ['sel-beta', 'sel-net'], pack: false });
    expect(await ranWith({ severities: ['high', 'medium'] })).toMatchObject({ ran: ['sel-alpha', 'sel-net'] });
    expect(await ranWith({ authors: ['bob'] })).toMatchObject({ ran: ['sel-beta'], pack: false });
    expect(await ranWith({ protocols: ['network'] })).toMatchObject({ ran: ['sel-net'], pack: false });
    expect(await ranWith({ protocols: ['http'], includeTags: ['alpha', 'beta', 'net'] })).toMatchObject({ ran: ['sel-alpha', 'sel-beta', 'sel-gamma'] });
    expect(await ranWith({ excludeTags: ['alpha'], excludeSeverities: ['low'], excludeIds: ['sel-net'] })).toMatchObject({ ran: [], pack: true });
    // An exclusion wins over an inclusion.
    expect(await ranWith({ includeTags: ['alpha'], excludeIds: ['sel-gamma'] })).toMatchObject({ ran: ['sel-alpha'] });
  });

  it('switches the default pack off; the workspace’s own templates still run', async () => {
    expect(await ranWith({ useDefaultPack: false })).toMatchObject({ ran: OWN, pack: false });
  });

  it('a scan narrows the workspace selection; its useDefaultPack decides', async () => {
    const saved = await setWorkspaceSelection({ includeTags: ['alpha', 'net'], useDefaultPack: false, excludeIds: [] });
    expect(saved.status).toBe(200);
    expect(saved.body.selection).toEqual({ includeTags: ['alpha', 'net'], useDefaultPack: false });

    expect(await ranWith()).toMatchObject({ ran: ['sel-alpha', 'sel-gamma', 'sel-net'], pack: false });
    // Both selections must pass: beta is not in the workspace's, gamma not in the scan's severities.
    expect(await ranWith({ includeIds: ['sel-alpha', 'sel-beta', 'sel-gamma'], severities: ['high'] })).toMatchObject({ ran: ['sel-alpha'] });
    // The scan's useDefaultPack overrides the workspace's: the pack runs (through the workspace's tag filter: no pack template has those tags).
    const onlyPack = await setWorkspaceSelection({ useDefaultPack: false, excludeTags: ['alpha', 'beta', 'net'] });
    expect(onlyPack.status).toBe(200);
    expect(await ranWith({ useDefaultPack: true })).toMatchObject({ ran: [], pack: true });
    expect(await ranWith()).toMatchObject({ ran: [], pack: false });

    expect((await setWorkspaceSelection({})).body.selection).toEqual({});
  });

  it('refuses unknown protocols and severities with 400 in the stable error shape, on both front doors', async () => {
    const badScan = await client.api('POST', '/api/v1/api/scans', {
      as: owner,
      workspaceId,
      body: { targetId, options: { templateSelection: { protocols: ['http', 'smtp'], severities: ['urgent'] } } },
    });
    expect(badScan.status).toBe(400);
    expect(badScan.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    expect(badScan.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'options.templateSelection.protocols.1',
      'options.templateSelection.severities.0',
    ]);
    expect(badScan.body.details[0].message).toMatch(/must be one of/);

    for (const selection of [
      { protocols: ['javascript'] },
      { excludeSeverities: ['unknown'] },
      { includeTags: [''] },
      { colour: ['red'] },
      { useDefaultPack: 'no' },
    ]) {
      const bad = await setWorkspaceSelection(selection);
      expect(bad.status, JSON.stringify(selection)).toBe(400);
      expect(bad.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
      expect(bad.body.details.length).toBeGreaterThan(0);
    }
    const tooMany = await setWorkspaceSelection({ includeIds: Array.from({ length: 1001 }, (_, i) => `t-${i}`) });
    expect(tooMany.status).toBe(400);

    const gql = await client.gql(
      `mutation($id: ID!) { updateTemplateSettings(workspaceId: $id, input: { selection: { protocols: [smtp] } }) { __typename } }`,
      { as: owner, variables: { id: workspaceId } },
    );
    expect(gql.errors?.[0]?.message).toMatch(/smtp/);
    const scanGql = await client.gql(
      `mutation($t: ID!) { startScan(targetId: $t, options: { templateSelection: { includeIds: [""] } }) { __typename ... on ValidationError { fields: details { field } } } }`,
      { as: owner, variables: { t: targetId } },
    );
    expect(scanGql.data).toMatchObject({ startScan: { __typename: 'ValidationError' } });
  });

  it('the selection reads back over GraphQL; members read it, only owners change it', async () => {
    const member = await client.signUp('Member');
    await client.addMember(owner, workspaceId, member);
    const set = await client.gql(
      `mutation($id: ID!) { updateTemplateSettings(workspaceId: $id, input: { selection: { severities: [high, critical], protocols: [http], authors: ["alice"] } }) {
        __typename ... on MutationUpdateTemplateSettingsSuccess { data { selection { severities protocols authors includeTags useDefaultPack } } } } }`,
      { as: owner, variables: { id: workspaceId } },
    );
    expect(set.data?.updateTemplateSettings).toEqual({
      __typename: 'MutationUpdateTemplateSettingsSuccess',
      data: { selection: { severities: ['high', 'critical'], protocols: ['http'], authors: ['alice'], includeTags: null, useDefaultPack: null } },
    });
    const read = await client.gql(`query($id: ID!) { workspace(id: $id) { templateSettings { selection { severities } } } }`, {
      as: member,
      variables: { id: workspaceId },
    });
    expect(read.data).toEqual({ workspace: { templateSettings: { selection: { severities: ['high', 'critical'] } } } });
    const denied = await client.api('PATCH', `/api/v1/api/workspaces/${workspaceId}/template-settings`, { as: member, body: { selection: {} } });
    expect(denied.status).toBe(403);
    expect((await client.api('GET', `/api/v1/api/workspaces/${workspaceId}/template-settings`, { as: member })).body.selection).toEqual({
      severities: ['high', 'critical'],
      protocols: ['http'],
      authors: ['alice'],
    });
  });
});
