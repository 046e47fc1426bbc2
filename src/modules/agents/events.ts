import type { AppDeps } from '../../context.js';
import type { AgentDeltaEvent } from '../../pubsub.js';
import type { MessageResponse } from './response.js';

/** After a message row committed: subscribers of the conversation re-read it. */
export function publishMessageAdded(deps: Pick<AppDeps, 'pubsub'>, conversationId: string, messageId: string): void {
  deps.pubsub.publish('agent:message', conversationId, { conversationId, messageId });
}

/** A partial of a reply in progress (nothing is stored until the reply is complete). */
export function publishDelta(deps: Pick<AppDeps, 'pubsub'>, event: AgentDeltaEvent): void {
  deps.pubsub.publish('agent:delta', event.conversationId, event);
}

/**
 * What one send produces, in order: the conversation, the stored question, the reply's partials, the stored reply,
 * `done`. The SSE route writes each as `event: <type>` with the object as JSON `data`; `error` precedes a reply
 * stored with messageType `error`.
 */
export type AgentStreamEvent =
  | { type: 'conversation'; conversationId: string; title: string; created: boolean }
  | { type: 'message'; message: MessageResponse }
  | { type: 'text-delta'; messageId: string; delta: string }
  | { type: 'thinking-delta'; messageId: string; delta: string }
  | { type: 'tool-call'; messageId: string; toolCallId: string; toolName: string; args: Record<string, unknown> }
  | { type: 'tool-result'; messageId: string; toolCallId: string; toolName: string; result: unknown; isError: boolean }
  | { type: 'error'; messageId: string | null; code: string; message: string }
  | { type: 'done'; conversationId: string; messageId: string };

export type AgentStreamSink = (event: AgentStreamEvent) => void;
