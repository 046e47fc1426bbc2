import type { Prisma } from '../../db.js';
import type { WorkspaceRole } from '../../auth/permissions.js';
import { nodeIdOf } from '../../graphql/ids.js';

/**
 * What a WorkspaceResponse needs: members with their users (memberCount is their number) and the target count.
 * With relation joins both are LATERAL subqueries of the page's one statement, run for the page's rows only
 * (EXPLAIN in `npm run bench:api-explain`), not a GROUP BY over every tenant's targets.
 */
export const workspaceResponseInclude = {
  members: { orderBy: { createdAt: 'asc' }, include: { user: { select: { id: true, name: true, image: true } } } },
  _count: { select: { targets: true } },
} satisfies Prisma.WorkspaceInclude;

type WorkspaceRow = Prisma.WorkspaceGetPayload<{ include: typeof workspaceResponseInclude }>;
type MemberRow = Pick<WorkspaceRow['members'][number], 'id' | 'role' | 'userId' | 'user' | 'createdAt' | 'updatedAt'>;
/** A row read through the ORM (workspaceResponseInclude) or by the REST page's statement (page-sql.ts). */
type WorkspaceSource = Omit<WorkspaceRow, 'members'> & { members: MemberRow[] };

export interface WorkspaceMemberResponse {
  id: string;
  role: WorkspaceRole;
  user: { id: string; name: string; image: string | null };
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkspaceResponse {
  id: string;
  /** The GraphQL global id. */
  nodeId: string;
  name: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
  archivedAt: Date | null;
  isAssetsDiscovery: boolean;
  isAutoEnableAssetAfterDiscovered: boolean;
  ownerId: string;
  targetCount: number;
  memberCount: number;
  role: WorkspaceRole;
  workspaceMembers: WorkspaceMemberResponse[];
}

export function toMemberResponse(member: MemberRow): WorkspaceMemberResponse {
  return { id: member.id, role: member.role, user: member.user, createdAt: member.createdAt, updatedAt: member.updatedAt };
}

/** The seed's WorkspaceResponse (2.1), with `role` as the caller's. */
export function toWorkspaceResponse(row: WorkspaceSource, viewerId: string): WorkspaceResponse {
  const mine = row.members.find((member) => member.userId === viewerId);
  return {
    id: row.id,
    nodeId: nodeIdOf('Workspace', row.id),
    name: row.name,
    description: row.description,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    archivedAt: row.archivedAt,
    isAssetsDiscovery: row.isAssetsDiscovery,
    isAutoEnableAssetAfterDiscovered: row.isAutoEnableAssetAfterDiscovered,
    ownerId: row.ownerId,
    targetCount: row._count.targets,
    memberCount: row.members.length,
    role: mine?.role ?? 'member',
    workspaceMembers: row.members.map(toMemberResponse),
  };
}
