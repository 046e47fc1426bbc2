import type { TestApp } from './app.js';
import { clientFor } from './client.js';
import { type DiscoveredHostInput, recordDiscoveredHosts, recordReferences } from '../../src/modules/assets/discovery.js';
import type { IngestScope } from '../../src/modules/assets/ingest.js';
import type { HostObservation } from '../../src/scanner/index.js';
import type { NameOrigin } from '../../src/scanner/discovery/types.js';

/**
 * Fixtures shared by the discovered-hosts tests (the service against the database, and the REST/GraphQL front
 * doors). The app is started by each test file's beforeAll, so the fixtures take it through a getter.
 */
export const ASSETS_PATH = '/api/v1/api/assets';
export const day = (n: number) => new Date(Date.UTC(2026, 1, n));

export function host(name: string): HostObservation {
  return { kind: 'host', host: name, addresses: ['127.0.0.1'], a: ['127.0.0.1'], aaaa: [], cname: [], resolvedVia: 'dns', outOfScope: [] };
}

export function found(name: string, ...origins: NameOrigin[]): DiscoveredHostInput {
  return { observation: host(name), origins };
}

export function discoveryFixtures(app: () => TestApp) {
  /** A workspace with a domain target and a scan row of it (the pipeline's scope). */
  async function setup(options: { autoEnable?: boolean } = {}) {
    const server = app();
    const client = clientFor(server);
    const owner = await client.signUp('Owner');
    const workspaceId = (await client.createWorkspace(owner, { isAutoEnableAssetAfterDiscovered: options.autoEnable ?? false })).id;
    const target = (await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'example.test' } })).body;
    const scan = await server.db.prisma.scan.create({ data: { workspaceId, targetId: target.id, options: {}, stepsTotal: 1 } });
    const scope = (overrides: Partial<IngestScope> = {}): IngestScope => ({
      workspaceId,
      targetId: target.id,
      scanId: scan.id,
      autoEnable: options.autoEnable ?? false,
      now: day(1),
      ...overrides,
    });
    return { owner, workspaceId, target, scan, scope };
  }

  function record(scope: IngestScope, hosts: DiscoveredHostInput[]) {
    return app().db.prisma.$transaction((tx) => recordDiscoveredHosts(tx, scope, hosts));
  }

  function assetByKey(workspaceId: string, key: string) {
    return app().db.prisma.asset.findUniqueOrThrow({ where: { workspaceId_key: { workspaceId, key } }, include: { discoveries: true, targetLinks: true } });
  }

  /** A workspace with discovered candidates, provenance and references (through the service), for the front doors. */
  async function candidates() {
    const fx = await setup();
    const recorded = await record(fx.scope(), [
      found('ct.example.test', { source: 'ct', from: 'example.test' }),
      found('both.example.test', { source: 'ct', from: 'example.test' }, { source: 'bruteforce', from: 'example.test' }),
      found('brute.example.test', { source: 'bruteforce', from: 'example.test' }),
    ]);
    await app().db.prisma.$transaction((tx) => recordReferences(tx, fx.workspaceId, [{ assetKey: 'host:both.example.test', names: ['partner.example.com'] }]));
    const id = (name: string) => recorded.idByName.get(name)!;
    return { ...fx, id };
  }

  return { setup, record, assetByKey, candidates };
}
