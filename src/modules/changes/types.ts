/**
 * The change feed's vocabulary: every type of change and the shape of its `data`. Shared by the writer
 * (record.ts), the readers (service.ts) and the front doors, so a payload is the same everywhere.
 */

export const CHANGE_TYPES = [
  'asset.discovered',
  'asset.changed',
  'asset.gone',
  'finding.opened',
  'finding.fixed',
  'finding.reopened',
  'finding.dismissed',
  'scan.completed',
  'scan.failed',
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** One field of an asset that a newer observation reports differently. Values are JSON (strings, numbers, lists). */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** What every asset event says about its asset, so the feed still reads when the asset row is gone. */
export interface AssetIdentity {
  kind: 'host' | 'service' | 'web' | 'certificate';
  key: string;
  value: string;
}

export interface FindingIdentity {
  name: string;
  severity: string;
  checkId: string;
}

/** `data` per type. */
export interface ChangeDataByType {
  /** `reappeared`: the asset had gone (an asset.gone event after it was last seen) and is seen again. */
  'asset.discovered': AssetIdentity & { reappeared?: boolean };
  'asset.changed': AssetIdentity & { changes: FieldChange[] };
  /** `lastSeenAt`: when a scan saw it last; `reason`: which covering probe no longer saw it. */
  'asset.gone': AssetIdentity & { lastSeenAt: string; reason: string };
  'finding.opened': FindingIdentity;
  'finding.fixed': FindingIdentity;
  /** Reopened by a scan (seen again after fixed) or by a person (actorId, comment). */
  'finding.reopened': FindingIdentity & { actorId?: string; comment?: string | null };
  'finding.dismissed': FindingIdentity & { actorId: string; reason: string; comment: string | null };
  'scan.completed': { assetsFound: number; findings: Record<'info' | 'low' | 'medium' | 'high' | 'critical', number> };
  'scan.failed': { error: string };
}

export type ChangeData = ChangeDataByType[ChangeType];

/** What a writer hands to recordChanges. `at` defaults to the time of the write. */
export type ChangeInput = {
  [T in ChangeType]: {
    type: T;
    workspaceId: string;
    at?: Date;
    assetId?: string | null;
    findingId?: string | null;
    scanId?: string | null;
    targetId?: string | null;
    data: ChangeDataByType[T];
  };
}[ChangeType];

/** A stored change event, as the feed, the subscription and (later) webhooks carry it. */
export interface ChangeEventRecord {
  id: string;
  workspaceId: string;
  type: ChangeType;
  at: Date;
  assetId: string | null;
  findingId: string | null;
  scanId: string | null;
  targetId: string | null;
  data: ChangeData;
}
