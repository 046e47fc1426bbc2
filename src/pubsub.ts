import { createPubSub } from 'graphql-yoga';
import { setMaxListeners } from 'node:events';
import type { Logger } from './logger.js';
import { createRedisEventTarget } from './pubsub-redis.js';
import type { OastInteraction } from './scanner/nuclei/oast.js';

/**
 * The one topic map. Payloads are small JSON objects (ids and changed fields): with Redis they cross
 * process boundaries as JSON, and subscribers re-read what they show through the service layer.
 */
export interface WorkspaceEvent {
  type: string;
  workspaceId: string;
  entityId: string;
  at: string;
  /** Set when the event is a stored change of the change feed (src/modules/changes): the row as the feed lists it. */
  change?: {
    id: string;
    type: string;
    at: string;
    assetId: string | null;
    findingId: string | null;
    scanId: string | null;
    targetId: string | null;
    data: unknown;
  };
}

export interface ScanUpdate {
  scanId: string;
  workspaceId: string;
  status: string;
  stepsDone: number;
  stepsTotal: number;
}

/** A message of an agent conversation was stored (user question or finished reply). Subscribers re-read it. */
export interface AgentMessageEvent {
  conversationId: string;
  messageId: string;
}

/** A partial of the assistant's reply while it is produced (not stored until the reply is complete). */
export interface AgentDeltaEvent {
  conversationId: string;
  /** The id the finished reply will have. */
  messageId: string;
  kind: 'text' | 'thinking' | 'tool_call' | 'tool_result' | 'error';
  /** Text or thinking delta, or the error text. */
  text?: string;
  toolCall?: { toolCallId: string; toolName: string; args: Record<string, unknown>; result?: unknown; isError?: boolean };
}

/** A scan step's OAST client asks the listeners (API process) to record its correlation id, or to forget it. */
export interface OastRegistration {
  correlationId: string;
  active: boolean;
}

/** A process changed what cached viewers or workspace roles may say (auth/auth-cache.ts); the others forget theirs. */
export interface AuthInvalidation {
  /** The announcing process (it has already forgotten). */
  origin: string;
}

export type Topics = {
  /** Every process's auth cache empties itself (src/auth/auth-cache.ts). */
  'auth:invalidated': [payload: AuthInvalidation];
  /** An interaction an OAST listener recorded (src/oast). Keyed by correlation id; only its client subscribes. */
  'oast:interaction': [correlationId: string, payload: OastInteraction];
  /** OAST clients registering (and refreshing) or dropping their correlation ids; the listeners subscribe. */
  'oast:registration': [payload: OastRegistration];
  /** Every change of one scan's status, progress or counters. Keyed by scan id. */
  'scan:updated': [scanId: string, payload: ScanUpdate];
  /** Anything that changes inside a workspace, for dashboards. Keyed by workspace id. */
  'workspace:event': [workspaceId: string, payload: WorkspaceEvent];
  /** Stored messages of one agent conversation. Keyed by conversation id. */
  'agent:message': [conversationId: string, payload: AgentMessageEvent];
  /** Partial replies of one agent conversation, as they stream. Keyed by conversation id. */
  'agent:delta': [conversationId: string, payload: AgentDeltaEvent];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>>;

export interface PubSubHandle {
  pubsub: PubSub;
  kind: 'memory' | 'redis';
  /** With Redis: whether both connections are up ('down' delays live events; nothing else depends on it). */
  health(): 'up' | 'down' | undefined;
  close(): Promise<void>;
}

/** In-process by default; with a Redis URL every API instance and worker shares events. */
export function createAppPubSub(redisUrl: string | undefined, log: Logger): PubSubHandle {
  if (!redisUrl) {
    // Every subscriber of a topic is one listener; dashboards easily pass Node's warning threshold of 10.
    const eventTarget = new EventTarget();
    setMaxListeners(0, eventTarget);
    return { pubsub: createPubSub<Topics>({ eventTarget }), kind: 'memory', health: () => undefined, close: async () => {} };
  }
  const redis = createRedisEventTarget(redisUrl, log);
  return { pubsub: createPubSub<Topics>({ eventTarget: redis.eventTarget }), kind: 'redis', health: redis.health, close: redis.close };
}
