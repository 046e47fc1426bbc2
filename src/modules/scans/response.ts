import type { ScanWithSteps } from './service.js';
import { nodeIdOf } from '../../graphql/ids.js';

/** The REST shape of a scan: progress and counters grouped, step outputs left out (they can be large). */
export function toScanResponse(scan: ScanWithSteps) {
  return {
    id: scan.id,
    nodeId: nodeIdOf('Scan', scan.id),
    workspaceId: scan.workspaceId,
    targetId: scan.targetId,
    status: scan.status,
    options: scan.options as Record<string, unknown>,
    progress: {
      stepsDone: scan.stepsDone,
      stepsTotal: scan.stepsTotal,
      percent: scan.stepsTotal ? Math.round((scan.stepsDone / scan.stepsTotal) * 100) : 0,
    },
    assetsFound: scan.assetsFound,
    findings: {
      info: scan.findingsInfo,
      low: scan.findingsLow,
      medium: scan.findingsMedium,
      high: scan.findingsHigh,
      critical: scan.findingsCritical,
    },
    error: scan.error,
    requestedById: scan.requestedById,
    createdAt: scan.createdAt,
    startedAt: scan.startedAt,
    finishedAt: scan.finishedAt,
    updatedAt: scan.updatedAt,
    steps: scan.steps.map((step) => ({
      id: step.id,
      name: step.name,
      position: step.position,
      status: step.status,
      attempts: step.attempts,
      error: step.error,
      startedAt: step.startedAt,
      finishedAt: step.finishedAt,
    })),
  };
}
