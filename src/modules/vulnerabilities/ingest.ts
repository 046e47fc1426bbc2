import type { Prisma } from '../../db.js';
import { findingFingerprint, type FindingObservation } from '../../scanner/index.js';
import { recordChanges } from '../changes/record.js';
import type { ChangeInput } from '../changes/types.js';

type Tx = Prisma.TransactionClient;

export interface FindingScope {
  workspaceId: string;
  /** The scanned target: every finding recorded is linked to it (and it becomes the finding's targetId). */
  targetId: string | null;
  scanId: string | null;
  now: Date;
}

/** An observation, with more targets it was seen through (e.g. those whose scope covers a tool's report). */
export type TargetedFinding = FindingObservation & { targetIds?: string[] };

export interface RecordedFindings {
  opened: string[];
  reopened: string[];
  seen: string[];
}

/**
 * Records what checks found, deduplicated by fingerprint (check + asset + matcher): a new fingerprint opens
 * a finding, a known one counts one more occurrence, a fixed one seen again reopens. Dismissed stays dismissed.
 */
export async function recordFindings(tx: Tx, scope: FindingScope, findings: TargetedFinding[], assetIdByKey: Map<string, string>): Promise<RecordedFindings> {
  const byFingerprint = new Map(findings.map((finding) => [findingFingerprint(finding.fingerprintParts), finding]));
  // One finding reported several times is linked to every target any report named.
  const linkedTargets = new Map<string, Set<string>>();
  for (const finding of findings) {
    const fingerprint = findingFingerprint(finding.fingerprintParts);
    const targets = linkedTargets.get(fingerprint) ?? new Set(scope.targetId ? [scope.targetId] : []);
    for (const targetId of finding.targetIds ?? []) targets.add(targetId);
    linkedTargets.set(fingerprint, targets);
  }
  const idByFingerprint = new Map<string, string>();
  const existing = await tx.finding.findMany({
    where: { workspaceId: scope.workspaceId, fingerprint: { in: [...byFingerprint.keys()] } },
    select: { id: true, fingerprint: true, status: true },
  });
  const existingByFingerprint = new Map(existing.map((row) => [row.fingerprint, row]));
  const result: RecordedFindings = { opened: [], reopened: [], seen: [] };
  const changes: ChangeInput[] = [];
  for (const [fingerprint, finding] of byFingerprint) {
    const assetId = assetIdByKey.get(finding.asset.key) ?? null;
    const feed = { workspaceId: scope.workspaceId, at: scope.now, scanId: scope.scanId, targetId: scope.targetId, assetId };
    const identity = { name: finding.name, severity: finding.severity, checkId: finding.checkId };
    const details = {
      name: finding.name,
      severity: finding.severity,
      // A sparse report (e.g. a tool's) never blanks the text a richer source stored.
      ...(finding.description ? { description: finding.description } : {}),
      ...(finding.remediation ? { remediation: finding.remediation } : {}),
      evidence: finding.evidence as Prisma.InputJsonValue,
      ...(finding.classification ? { classification: finding.classification as Prisma.InputJsonValue } : {}),
      lastSeenAt: scope.now,
      // Results pushed by a tool have no scan: they keep the scan that last saw the finding.
      ...(scope.scanId ? { lastScanId: scope.scanId } : {}),
      assetId,
      ...(scope.targetId ? { targetId: scope.targetId } : {}),
    };
    const known = existingByFingerprint.get(fingerprint);
    if (!known) {
      const row = await tx.finding.create({
        data: {
          ...details,
          workspaceId: scope.workspaceId,
          fingerprint,
          checkId: finding.checkId,
          source: finding.source,
          matcher: finding.matcher,
          description: finding.description,
          remediation: finding.remediation,
          lastScanId: scope.scanId,
          firstSeenAt: scope.now,
          events: { create: { type: 'opened', scanId: scope.scanId } },
        },
        select: { id: true },
      });
      result.opened.push(row.id);
      idByFingerprint.set(fingerprint, row.id);
      changes.push({ ...feed, type: 'finding.opened', findingId: row.id, data: identity });
      continue;
    }
    const reopen = known.status === 'fixed';
    await tx.finding.update({
      where: { id: known.id },
      data: {
        ...details,
        occurrences: { increment: 1 },
        ...(reopen ? { status: 'open', fixedAt: null } : {}),
        events: { create: { type: reopen ? 'reopened' : 'seen', scanId: scope.scanId } },
      },
    });
    (reopen ? result.reopened : result.seen).push(known.id);
    idByFingerprint.set(fingerprint, known.id);
    if (reopen) changes.push({ ...feed, type: 'finding.reopened', findingId: known.id, data: identity });
  }
  await recordChanges(tx, changes);
  await linkFindingsToTargets(
    tx,
    [...linkedTargets].flatMap(([fingerprint, targetIds]) => [...targetIds].map((targetId) => ({ findingId: idByFingerprint.get(fingerprint)!, targetId }))),
    scope.now,
  );
  return result;
}

/**
 * Records that findings were seen through targets: a new pair is linked (first seen now), a known one only
 * moves its lastSeenAt. One insert and one update per target, inside the caller's transaction.
 */
async function linkFindingsToTargets(tx: Tx, links: { findingId: string; targetId: string }[], now: Date): Promise<void> {
  const byTarget = new Map<string, string[]>();
  for (const { findingId, targetId } of links) {
    const findingIds = byTarget.get(targetId) ?? [];
    findingIds.push(findingId);
    byTarget.set(targetId, findingIds);
  }
  for (const [targetId, findingIds] of byTarget) {
    await tx.findingTarget.createMany({
      data: findingIds.map((findingId) => ({ findingId, targetId, firstSeenAt: now, lastSeenAt: now })),
      skipDuplicates: true,
    });
    await tx.findingTarget.updateMany({ where: { targetId, findingId: { in: findingIds } }, data: { lastSeenAt: now } });
  }
}

/**
 * A scan that covered an asset with a check and no longer sees that check's finding marks it fixed.
 * Only pairs (check, asset) that ran without an error count as covered.
 */
export async function resolveUnseenFindings(
  tx: Tx,
  scope: FindingScope,
  covered: { checkIds: string[]; assetIds: string[]; erroredPairs: Set<string> },
): Promise<string[]> {
  if (!covered.assetIds.length || !covered.checkIds.length) return [];
  const candidates = await tx.finding.findMany({
    where: {
      workspaceId: scope.workspaceId,
      status: 'open',
      assetId: { in: covered.assetIds },
      checkId: { in: covered.checkIds },
      ...(scope.scanId ? { OR: [{ lastScanId: null }, { lastScanId: { not: scope.scanId } }] } : {}),
    },
    select: { id: true, checkId: true, assetId: true, name: true, severity: true },
  });
  const fixed = candidates.filter((finding) => !covered.erroredPairs.has(`${finding.checkId} ${finding.assetId}`));
  for (const { id } of fixed) {
    await tx.finding.update({
      where: { id },
      data: { status: 'fixed', fixedAt: scope.now, events: { create: { type: 'fixed', scanId: scope.scanId } } },
    });
  }
  await recordChanges(
    tx,
    fixed.map((finding) => ({
      type: 'finding.fixed' as const,
      workspaceId: scope.workspaceId,
      at: scope.now,
      scanId: scope.scanId,
      targetId: scope.targetId,
      assetId: finding.assetId,
      findingId: finding.id,
      data: { name: finding.name, severity: finding.severity, checkId: finding.checkId },
    })),
  );
  return fixed.map((finding) => finding.id);
}
