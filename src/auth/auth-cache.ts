import type { Viewer } from '../context.js';
import type { WorkspaceRole } from './permissions.js';

/**
 * Who a bearer credential is, and which role a user holds in a workspace, remembered across requests for a
 * few seconds. Every list request used to spend two of its four database round trips on these two lookups;
 * on this machine a round trip costs more CPU than the page's own work (socket writes dominate the profile).
 *
 * Correctness rests on invalidation, not on the TTL: every write that can change an answer (sign-out, a
 * session or user row written by the auth library, a profile change, a revoked token, a membership added,
 * changed or removed, a workspace deleted) calls `invalidate()` after it committed, which empties this
 * process's cache and tells the other processes (pub/sub, Redis when scaled out) to empty theirs. The TTL
 * bounds what invalidation cannot reach: a row changed by hand in the database, or a Redis outage between
 * instances. A read that raced an invalidation is not stored (the generation moved on while it ran), and an
 * entry never outlives its credential (session or token expiry, or the session's due extension).
 *
 * Only positive answers are stored (a valid credential, an existing membership): unknown tokens and
 * strangers' workspace ids cost a lookup each time, so nobody can fill the cache with guesses, and both
 * maps are bounded anyway.
 */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  until: number;
}

export interface AuthCache {
  /** Increases on every invalidation: read it before a lookup and hand it back to the setter. */
  generation(): number;
  viewer(key: string): Viewer | undefined;
  /** Stores a viewer until `until` (capped by the TTL), unless an invalidation happened since `generation`. */
  rememberViewer(key: string, viewer: Viewer, generation: number, until?: number): void;
  role(userId: string, workspaceId: string): WorkspaceRole | undefined;
  rememberRole(userId: string, workspaceId: string, role: WorkspaceRole, generation: number): void;
  /** After a write that may change an answer: this process forgets everything and tells the others to. */
  invalidate(): void;
  /** An invalidation announced by another process. */
  forget(): void;
}

export function createAuthCache(options: { ttlMs: number; announce?: () => void; now?: () => number }): AuthCache {
  const { ttlMs, announce } = options;
  const now = options.now ?? Date.now;
  const viewers = new Map<string, Entry<Viewer>>();
  const roles = new Map<string, Entry<WorkspaceRole>>();
  let generation = 0;

  const read = <T>(map: Map<string, Entry<T>>, key: string): T | undefined => {
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.until > now()) return entry.value;
    map.delete(key);
    return undefined;
  };
  const write = <T>(map: Map<string, Entry<T>>, key: string, value: T, since: number, until = Number.POSITIVE_INFINITY) => {
    if (ttlMs <= 0 || since !== generation) return;
    // Bounded: past the cap the map starts over (every entry is one lookup away from coming back).
    if (map.size >= AUTH_CACHE_MAX_ENTRIES) map.clear();
    map.set(key, { value, until: Math.min(now() + ttlMs, until) });
  };
  const forget = () => {
    generation += 1;
    viewers.clear();
    roles.clear();
  };

  return {
    generation: () => generation,
    viewer: (key) => read(viewers, key),
    rememberViewer: (key, viewer, since, until) => write(viewers, key, viewer, since, until),
    role: (userId, workspaceId) => read(roles, `${userId}:${workspaceId}`),
    rememberRole: (userId, workspaceId, role, since) => write(roles, `${userId}:${workspaceId}`, role, since),
    invalidate: () => {
      forget();
      announce?.();
    },
    forget,
  };
}
