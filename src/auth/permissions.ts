/**
 * The one permission catalogue. Owners may do everything in their workspace; members do the everyday
 * work (read, targets, scans, triage, agents) but not settings, members, keys, deletion or archival.
 * Later domains add their actions here.
 */
export type WorkspaceRole = 'owner' | 'member';

const MEMBER_ACTIONS = [
  'workspace:read',
  'member:read',
  'target:read',
  'target:write',
  'scan:read',
  'scan:start',
  'finding:read',
  'finding:triage',
  'asset:read',
  'template:read',
  'tool:read',
  'agent:use',
  'mcp:read',
] as const;

const OWNER_ONLY_ACTIONS = [
  'workspace:update',
  'workspace:archive',
  'workspace:delete',
  'member:manage',
  'apikey:manage',
  'tool:manage',
  'template:manage',
  'mcp:manage',
  'audit:read',
  'webhook:manage',
] as const;

export type WorkspaceAction = (typeof MEMBER_ACTIONS)[number] | (typeof OWNER_ONLY_ACTIONS)[number];

const ALLOWED: Record<WorkspaceRole, ReadonlySet<WorkspaceAction>> = {
  member: new Set(MEMBER_ACTIONS),
  owner: new Set([...MEMBER_ACTIONS, ...OWNER_ONLY_ACTIONS]),
};

export function roleAllows(role: WorkspaceRole, action: WorkspaceAction): boolean {
  return ALLOWED[role].has(action);
}
