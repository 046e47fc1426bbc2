/**
 * What a completing step covered, as change-feed events (asset.gone, certificate changes): read inside the
 * step's transaction BEFORE its results are stored, recorded after them. The rules are in changes/gone.ts.
 */
import type { Prisma } from '../../db.js';
import { serviceAssetKey, webAssetKey, type ScopeGuard } from '../../scanner/index.js';
import { certificateChanges, goneServices, goneWebEndpoints, probedServices, type GoneScope } from '../changes/gone.js';
import type { ChangeInput } from '../changes/types.js';
import type { ScanOptions, ScanStepName } from './schemas.js';
import { addressesInScope, scannedPorts, type StepOutputs } from './steps.js';

type Tx = Prisma.TransactionClient;

async function earlierOutput<K extends 'dns' | 'ports'>(tx: Tx, scanId: string, name: K): Promise<StepOutputs[K] | undefined> {
  const step = await tx.scanStep.findFirst({ where: { scanId, name, status: 'COMPLETED' }, select: { output: true } });
  return (step?.output ?? undefined) as StepOutputs[K] | undefined;
}

export async function coverageChanges(
  tx: Tx,
  scope: GoneScope & { target: { type: string; value: string }; options: ScanOptions },
  name: ScanStepName,
  output: unknown,
  guard: ScopeGuard,
): Promise<ChangeInput[]> {
  if (name === 'ports') {
    const dns = await earlierOutput(tx, scope.scanId, 'dns');
    if (!dns) return [];
    const addresses = addressesInScope(dns.hosts, guard, { refuseAll: false }).map((pair) => pair.address);
    const { services } = output as NonNullable<StepOutputs['ports']>;
    const open = new Set(services.map((service) => serviceAssetKey(service)));
    return goneServices(tx, scope, { addresses, ports: scannedPorts(scope.options, scope.target) }, open);
  }
  if (name === 'http' || name === 'tls') {
    const ports = await earlierOutput(tx, scope.scanId, 'ports');
    if (!ports) return [];
    if (name === 'http') {
      const { web, errors } = output as NonNullable<StepOutputs['http']>;
      return goneWebEndpoints(tx, scope, probedServices(ports.services, errors), new Set(web.map((endpoint) => webAssetKey(endpoint))));
    }
    const { certificates, errors } = output as NonNullable<StepOutputs['tls']>;
    return certificateChanges(tx, scope, probedServices(ports.services, errors), certificates);
  }
  return [];
}
