import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { SCAN_STEP_NAMES, type ScanStepName } from './schemas.js';
import { getScan } from './service.js';

/** Where a scan step's full result lives in the blob store. */
export function scanArtefactKey(scanId: string, step: ScanStepName): string {
  return `scan-artefacts/${scanId}/${step}.json`;
}

/** The stored result of one completed step of a visible scan. */
export async function getScanArtefact(ctx: ServiceContext, scanId: string, step: string, workspaceId?: string): Promise<unknown> {
  const scan = await getScan(ctx, scanId, workspaceId);
  const known = (SCAN_STEP_NAMES as readonly string[]).includes(step) ? (step as ScanStepName) : null;
  const completed = known && scan.steps.some((s) => s.name === known && s.status === 'COMPLETED');
  const body = completed ? await ctx.deps.storage.get(scanArtefactKey(scan.id, known)) : null;
  if (!body) throw new NotFoundError('Scan artefact');
  return JSON.parse(body.toString('utf8')) as unknown;
}
