import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { ASSETS_PATH, day, discoveryFixtures, found, host } from './support/asset-discovery.js';
import { inventoryObservations, MAX_ASSET_REFERENCES, recordProvenance, recordReferences, scannableHostNames } from '../src/modules/assets/discovery.js';

/**
 * Discovered hosts in the inventory, the service the scan pipeline calls, against the real database. What members
 * see and decide through REST and GraphQL is in assets.discovery.api.test.ts. Workers are off: nothing ever runs.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false', SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' });
  client = clientFor(server);
});
afterAll(() => server?.stop());

const BASE = ASSETS_PATH;
const { setup, record, assetByKey } = discoveryFixtures(() => server);

describe('recordDiscoveredHosts', () => {
  it('creates candidates (disabled) when the workspace does not auto-enable, enabled ones when it does', async () => {
    const fx = await setup();
    const first = await record(fx.scope(), [
      found('www.example.test', { source: 'bruteforce', from: 'example.test' }),
      found('API.example.test', { source: 'ct' }),
    ]);
    expect(first.created).toHaveLength(2);
    expect([...first.idByName.keys()].sort()).toEqual(['api.example.test', 'www.example.test']);
    expect(first.scannable.size).toBe(0);
    const www = await assetByKey(fx.workspaceId, 'host:www.example.test');
    expect(www).toMatchObject({ kind: 'host', value: 'www.example.test', enabled: false, dismissedAt: null, targetId: fx.target.id, lastScanId: fx.scan.id });
    expect(www.data).toMatchObject({ host: 'www.example.test', addresses: ['127.0.0.1'] });
    expect(www.targetLinks.map((link) => link.targetId)).toEqual([fx.target.id]);
    expect(first.created).toContain(www.id);

    // Auto-enable applies to new hosts only: the waiting candidate stays a candidate.
    const second = await record(fx.scope({ autoEnable: true, now: day(2) }), [
      found('www.example.test', { source: 'bruteforce' }),
      found('mail.example.test', { source: 'dns', from: 'example.test' }),
    ]);
    const mail = await assetByKey(fx.workspaceId, 'host:mail.example.test');
    expect(second.created).toEqual([mail.id]);
    expect(mail.enabled).toBe(true);
    expect((await assetByKey(fx.workspaceId, 'host:www.example.test')).enabled).toBe(false);
    expect([...second.scannable]).toEqual(['mail.example.test']);
    expect(second.idByName.get('www.example.test')).toBe(www.id);
  });

  it('keeps a dismissed host dismissed and never creates it again', async () => {
    const fx = await setup({ autoEnable: true });
    const first = await record(fx.scope(), [found('old.example.test', { source: 'ct' })]);
    const id = first.idByName.get('old.example.test')!;
    expect(first.scannable.has('old.example.test')).toBe(true);
    const dismissed = await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { dismissed: true } });
    expect(dismissed.body).toMatchObject({ enabled: false, dismissed: true });

    const again = await record(fx.scope({ now: day(3) }), [found('old.example.test', { source: 'bruteforce', from: 'example.test' })]);
    expect(again.created).toEqual([]);
    expect(again.idByName.get('old.example.test')).toBe(id);
    expect(again.scannable.size).toBe(0);
    const row = await assetByKey(fx.workspaceId, 'host:old.example.test');
    expect(row).toMatchObject({ id, enabled: false, lastSeenAt: day(3) });
    expect(row.dismissedAt).not.toBeNull();
    expect(row.discoveries.map((entry) => entry.source).sort()).toEqual(['bruteforce', 'ct']);
  });

  it('keeps one provenance row per source: first seen stays, the rest moves to the latest sighting', async () => {
    const fx = await setup();
    const prisma = server.db.prisma;
    const apex = await record(fx.scope(), [found('example.test', { source: 'target' })]);
    const cert = await prisma.asset.create({
      data: { workspaceId: fx.workspaceId, kind: 'certificate', key: 'cert:ab12', value: 'CN=example.test', data: {} },
    });
    const laterScan = await prisma.scan.create({ data: { workspaceId: fx.workspaceId, targetId: fx.target.id, options: {}, stepsTotal: 1 } });

    await record(fx.scope(), [found('dev.example.test', { source: 'bruteforce', from: 'example.test' })]);
    let dev = await assetByKey(fx.workspaceId, 'host:dev.example.test');
    expect(dev.discoveries).toEqual([
      expect.objectContaining({
        workspaceId: fx.workspaceId,
        source: 'bruteforce',
        from: 'example.test',
        fromAssetId: apex.idByName.get('example.test'),
        scanId: fx.scan.id,
        firstSeenAt: day(1),
        lastSeenAt: day(1),
      }),
    ]);

    await record(fx.scope({ scanId: laterScan.id, now: day(4) }), [
      found('dev.example.test', { source: 'bruteforce', from: 'https://portal.example.test/' }, { source: 'certificate', from: 'cert:ab12' }),
      { observation: host('dev.example.test'), origins: [{ source: 'link', from: 'https://portal.example.test/' }], fromAssetKey: 'cert:ab12' },
    ]);
    dev = await assetByKey(fx.workspaceId, 'host:dev.example.test');
    const bySource = new Map(dev.discoveries.map((entry) => [entry.source, entry]));
    expect(dev.discoveries).toHaveLength(3);
    expect(bySource.get('bruteforce')).toMatchObject({
      from: 'https://portal.example.test/',
      fromAssetId: null,
      scanId: laterScan.id,
      firstSeenAt: day(1),
      lastSeenAt: day(4),
    });
    expect(bySource.get('certificate')).toMatchObject({ from: 'cert:ab12', fromAssetId: cert.id, firstSeenAt: day(4), lastSeenAt: day(4) });
    // `from` is a URL; the pipeline named the asset that pointed at it.
    expect(bySource.get('link')).toMatchObject({ from: 'https://portal.example.test/', fromAssetId: cert.id });

    // Deleting the asset that pointed keeps the provenance, without the pointer.
    await prisma.asset.delete({ where: { id: cert.id } });
    expect((await assetByKey(fx.workspaceId, 'host:dev.example.test')).discoveries.find((entry) => entry.source === 'certificate')).toMatchObject({
      from: 'cert:ab12',
      fromAssetId: null,
    });
  });

  it('refuses a source the engine does not know, and writes nothing', async () => {
    const fx = await setup();
    await expect(record(fx.scope(), [found('x.example.test', { source: 'guess' as never })])).rejects.toThrow(/Unknown discovery source "guess"/);
    expect(await server.db.prisma.asset.count({ where: { workspaceId: fx.workspaceId } })).toBe(0);
  });
});

describe('recordProvenance, recordReferences, scannableHostNames, inventoryObservations', () => {
  it('records provenance of stored assets of the workspace only', async () => {
    const fx = await setup({ autoEnable: true });
    const other = await setup();
    const { idByName } = await record(fx.scope(), [found('example.test', { source: 'dns' })]);
    const id = idByName.get('example.test')!;
    await server.db.prisma.$transaction((tx) =>
      recordProvenance(tx, fx.scope({ now: day(5) }), [{ assetId: id, origin: { source: 'target', from: 'example.test' } }]),
    );
    const row = await assetByKey(fx.workspaceId, 'host:example.test');
    expect(row.discoveries.find((entry) => entry.source === 'target')).toMatchObject({ from: 'example.test', fromAssetId: null, firstSeenAt: day(5) });

    const foreign = server.db.prisma.$transaction((tx) => recordProvenance(tx, other.scope(), [{ assetId: id, origin: { source: 'target' } }]));
    await expect(foreign).rejects.toThrow(/not assets of workspace/);
    expect(await server.db.prisma.assetDiscovery.count({ where: { workspaceId: other.workspaceId } })).toBe(0);
  });

  it('unions references, newest last, at most 200, and drops what is not a host name', async () => {
    const fx = await setup({ autoEnable: true });
    await record(fx.scope(), [found('www.example.test', { source: 'bruteforce' })]);
    const prisma = server.db.prisma;
    const changed = await prisma.$transaction((tx) =>
      recordReferences(tx, fx.workspaceId, [
        { assetKey: 'host:www.example.test', names: ['Partner.example.com', 'cdn.example.net', 'not a name', 'partner.example.com'] },
        { assetKey: 'host:missing.example.test', names: ['ignored.example.com'] },
      ]),
    );
    expect(changed).toBe(1);
    // partner.example.com came again after cdn.example.net: it is the newest.
    expect((await assetByKey(fx.workspaceId, 'host:www.example.test')).references).toEqual(['cdn.example.net', 'partner.example.com']);

    await prisma.$transaction((tx) =>
      recordReferences(tx, fx.workspaceId, [{ assetKey: 'host:www.example.test', names: ['new.example.org', 'partner.example.com'] }]),
    );
    expect((await assetByKey(fx.workspaceId, 'host:www.example.test')).references).toEqual(['cdn.example.net', 'new.example.org', 'partner.example.com']);
    // Seeing the same names again changes nothing.
    expect(
      await prisma.$transaction((tx) => recordReferences(tx, fx.workspaceId, [{ assetKey: 'host:www.example.test', names: ['partner.example.com'] }])),
    ).toBe(0);

    const many = Array.from({ length: 250 }, (_, index) => `site${index}.example.org`);
    await prisma.$transaction((tx) => recordReferences(tx, fx.workspaceId, [{ assetKey: 'host:www.example.test', names: many }]));
    const references = (await assetByKey(fx.workspaceId, 'host:www.example.test')).references;
    expect(references).toHaveLength(MAX_ASSET_REFERENCES);
    expect(references).toEqual(many.slice(-MAX_ASSET_REFERENCES));
  });

  it('answers which names are enabled, non-dismissed hosts', async () => {
    const fx = await setup();
    const prisma = server.db.prisma;
    const { idByName } = await record(fx.scope(), [
      found('on.example.test', { source: 'ct' }),
      found('candidate.example.test', { source: 'ct' }),
      found('gone.example.test', { source: 'ct' }),
    ]);
    await prisma.asset.update({ where: { id: idByName.get('on.example.test')! }, data: { enabled: true } });
    await prisma.asset.update({ where: { id: idByName.get('gone.example.test')! }, data: { enabled: true, dismissedAt: day(2) } });
    const other = await setup({ autoEnable: true });
    await record(other.scope(), [found('theirs.example.test', { source: 'ct' })]);
    const names = ['on.example.test', 'ON.example.test', 'candidate.example.test', 'gone.example.test', 'unknown.example.test', 'theirs.example.test'];
    expect([...(await scannableHostNames(prisma, fx.workspaceId, names))].sort()).toEqual(['ON.example.test', 'on.example.test']);
    expect(await prisma.$transaction((tx) => scannableHostNames(tx, fx.workspaceId, []))).toEqual(new Set());
  });

  it('reads what earlier scans saw at or under a domain, newest first, without dismissed ones', async () => {
    const fx = await setup({ autoEnable: true });
    const prisma = server.db.prisma;
    const make = (kind: 'host' | 'service' | 'web' | 'certificate', key: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      prisma.asset.create({ data: { workspaceId: fx.workspaceId, kind, key, value: String(data.host ?? key), data: data as object, ...extra } });
    await make('host', 'host:example.test', { host: 'example.test', addresses: [] }, { lastSeenAt: day(1) });
    await make('host', 'host:a.example.test', { host: 'a.example.test', addresses: ['127.0.0.1'] }, { lastSeenAt: day(3) });
    await make('host', 'host:x.a_b.example.test', { host: 'x.a_b.example.test', addresses: [] }, { lastSeenAt: day(2) });
    await make('host', 'host:x.axb.example.test', { host: 'x.axb.example.test', addresses: [] }, { lastSeenAt: day(4) });
    await make('host', 'host:notexample.test', { host: 'notexample.test', addresses: [] });
    await make('host', 'host:old.example.test', { host: 'old.example.test', addresses: [] }, { dismissedAt: day(1) });
    await make('web', 'web:https://a.example.test:443', { host: 'a.example.test', url: 'https://a.example.test/', status: 200 });
    await make('web', 'web:https://evil.test:443', { host: 'evil.test', url: 'https://evil.test/', status: 200 });
    await make('certificate', 'cert:c1', { host: 'example.test', sans: ['example.test', 'b.example.test'] });
    await make('service', 'service:127.0.0.1:443/tcp', { host: 'example.test', port: 443 });

    const seen = await inventoryObservations(prisma, fx.workspaceId, 'Example.TEST');
    expect(seen.hosts.map((observation) => observation.host)).toEqual(['x.axb.example.test', 'a.example.test', 'x.a_b.example.test', 'example.test']);
    expect(seen.hosts[1]).toEqual({ kind: 'host', host: 'a.example.test', addresses: ['127.0.0.1'] });
    expect(seen.web).toEqual([{ kind: 'web', host: 'a.example.test', url: 'https://a.example.test/', status: 200 }]);
    expect(seen.certificates).toEqual([{ kind: 'certificate', host: 'example.test', sans: ['example.test', 'b.example.test'] }]);

    // `_` is a wildcard to the database's LIKE: only the name itself matches.
    expect((await inventoryObservations(prisma, fx.workspaceId, 'a_b.example.test')).hosts.map((observation) => observation.host)).toEqual([
      'x.a_b.example.test',
    ]);
    expect((await inventoryObservations(prisma, fx.workspaceId, 'example.test', { limit: 2 })).hosts).toHaveLength(2);
    await expect(inventoryObservations(prisma, fx.workspaceId, 'not a domain')).rejects.toThrow(/not a valid host name/);
  });
});
