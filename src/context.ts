import type { Env } from './env.js';
import type { Logger } from './logger.js';
import type { Database, PrismaClient } from './db.js';
import type { Auth } from './auth/better-auth.js';
import type { PubSub } from './pubsub.js';
import type { JobQueue } from './queue.js';
import type { AttemptLimiter } from './auth/rate-limit.js';
import type { SecretBox } from './crypto/secret-box.js';
import type { WorkspaceRole } from './auth/permissions.js';
import type { BlobStore } from './storage/index.js';
import type { AuthCache } from './auth/auth-cache.js';

/** Long-lived things every request shares: built once by createApp(). */
export interface AppDeps {
  env: Env;
  log: Logger;
  db: Database;
  prisma: PrismaClient;
  auth: Auth;
  pubsub: PubSub;
  queue: JobQueue;
  authLimiter: AttemptLimiter;
  /** Viewers and workspace roles remembered across requests, forgotten on every write that changes them. */
  authCache: AuthCache;
  /** Encrypts third-party secrets we must replay (MCP headers, model keys). */
  secrets: SecretBox;
  /** Object storage (local files or S3): templates, the instance logo. */
  storage: BlobStore;
}

export interface Viewer {
  id: string;
  name: string;
  email: string;
  image: string | null;
  role: 'admin' | 'user';
  /** How the caller proved who they are. */
  via: 'session' | 'api-token' | 'workspace-api-key';
  /** The personal API token or workspace API key presented (id and shown prefix, never the secret): the audit log's actor. */
  credential?: { id: string; prefix: string };
}

/** What every service function receives: who is asking, and this request's memo of workspace roles. */
export interface ServiceContext {
  deps: AppDeps;
  viewer: Viewer | null;
  requestId: string;
  clientIp: string;
  /** The workspace named by `X-Workspace-Id` or the `wid` cookie (REST), if any. */
  workspaceId?: string;
  /** Response headers a service asks the front door to set (e.g. a session cookie). */
  responseHeaders: Headers;
  roleMemo: Map<string, WorkspaceRole | null>;
  /**
   * Set when the caller is a workspace API key (our MCP endpoint): it acts for exactly this workspace, with at
   * most this role. workspaceRole() answers null for every other workspace, so assertCan refuses them.
   */
  actsFor?: { workspaceId: string; maxRole: WorkspaceRole };
  /** Set when the caller is a tool's API key (tool result submissions): the audit log's actor. */
  toolKey?: { id: string; prefix: string; workspaceId: string };
}

export function createServiceContext(
  deps: AppDeps,
  fields: Pick<ServiceContext, 'viewer' | 'requestId' | 'clientIp'> & Partial<Pick<ServiceContext, 'workspaceId' | 'actsFor'>>,
): ServiceContext {
  return { deps, ...fields, responseHeaders: new Headers(), roleMemo: new Map() };
}
