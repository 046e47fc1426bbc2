import type { ServiceContext } from '../../context.js';
import { createScopeGuard } from '../../scanner/scope.js';
import { getWorkspace } from '../workspaces/service.js';
import { composeFallbackAnswer, planFallback } from './fallback.js';
import { ModelError, streamChatCompletion, type ChatMessage } from './llm.js';
import type { ModelEndpoint } from './model-config.js';
import { runTool, toolDefinitions, type ToolOutcome, type ToolScope } from './tools.js';
import type { ToolCallResponse } from './response.js';

/** Model rounds per reply: each may call tools; the last must answer in words. */
export const MAX_ROUNDS = 5;
/** Tool calls run per round; more are answered with an error result. */
export const MAX_CALLS_PER_ROUND = 8;
const MODEL_CALL_TIMEOUT_MS = 120_000;
const MODEL_IDLE_TIMEOUT_MS = 45_000;
const TURN_TIMEOUT_MS = 300_000;
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

/** What a reply streams while it is produced. */
export interface ReplyListener {
  text(delta: string): void;
  thinking(delta: string): void;
  toolCall(call: { toolCallId: string; toolName: string; args: Record<string, unknown> }): void;
  toolResult(call: ToolCallResponse): void;
  error(code: string, message: string): void;
}

export interface Reply {
  content: string;
  messageType: 'text' | 'error';
  parts: Record<string, unknown>[];
  toolCalls: ToolCallResponse[];
  metadata: Record<string, unknown>;
}

/** Collects the reply as it streams: its text, its parts in order, and every tool call with its result. */
class ReplyBuilder {
  text = '';
  readonly parts: Record<string, unknown>[] = [];
  readonly toolCalls: ToolCallResponse[] = [];

  constructor(private readonly listener: ReplyListener) {}

  private append(type: 'text' | 'thinking', delta: string): void {
    const last = this.parts.at(-1);
    if (last?.type === type) last.text = `${String(last.text)}${delta}`;
    else this.parts.push({ type, text: delta });
  }

  addText(delta: string): void {
    if (!delta) return;
    this.text += delta;
    this.append('text', delta);
    this.listener.text(delta);
  }

  addThinking(delta: string): void {
    if (!delta) return;
    this.append('thinking', delta);
    this.listener.thinking(delta);
  }

  addToolCall(toolCallId: string, toolName: string, outcome: ToolOutcome): void {
    const call = { toolCallId, toolName, args: outcome.args, result: outcome.result, isError: outcome.isError };
    this.parts.push({ type: 'tool-call', toolCallId, toolName, args: outcome.args });
    this.listener.toolCall({ toolCallId, toolName, args: outcome.args });
    this.parts.push({ type: 'tool-result', toolCallId, toolName, result: outcome.result, isError: outcome.isError });
    this.listener.toolResult(call);
    this.toolCalls.push(call);
  }

  fail(code: string, message: string, metadata: Record<string, unknown>): Reply {
    this.parts.push({ type: 'error', code, message });
    this.listener.error(code, message);
    return { content: message, messageType: 'error', parts: this.parts, toolCalls: this.toolCalls, metadata: { ...metadata, error: { code } } };
  }

  done(metadata: Record<string, unknown>): Reply {
    return { content: this.text, messageType: 'text', parts: this.parts, toolCalls: this.toolCalls, metadata };
  }
}

export interface TurnInput {
  ctx: ServiceContext;
  workspaceId: string;
  question: string;
  /** Earlier questions and answers of the conversation, oldest first. */
  history: { role: 'user' | 'assistant'; content: string }[];
  endpoint: ModelEndpoint | null;
}

/** Produces the assistant's reply to one question. Never throws for the model's failures: they become an error reply. */
export async function runTurn(input: TurnInput, listener: ReplyListener): Promise<Reply> {
  const reply = new ReplyBuilder(listener);
  const scope: ToolScope = { ctx: input.ctx, workspaceId: input.workspaceId, question: input.question };
  if (!input.endpoint) return runFallback(scope, input.question, reply);
  return runModel(scope, input, input.endpoint, reply);
}

async function runFallback(scope: ToolScope, question: string, reply: ReplyBuilder): Promise<Reply> {
  const outcomes: (ToolOutcome & { toolName: string })[] = [];
  for (const [index, call] of planFallback(question).entries()) {
    const outcome = await runTool(scope, call.toolName, call.args);
    reply.addToolCall(`fallback_${index + 1}`, call.toolName, outcome);
    outcomes.push({ ...outcome, toolName: call.toolName });
  }
  reply.addText(composeFallbackAnswer(outcomes));
  return reply.done({ source: 'fallback' });
}

async function systemPrompt(scope: ToolScope): Promise<string> {
  const workspace = await getWorkspace(scope.ctx, scope.workspaceId);
  return [
    `You are the security assistant of Perimeter, an attack surface management platform, working in the workspace "${workspace.name}".`,
    "Answer questions about this workspace's targets, assets, scans and findings using the tools; never invent data the tools did not return.",
    'Call start_scan only when the user explicitly asks to start a scan.',
    `Be concise. Today is ${new Date().toISOString().slice(0, 10)}.`,
  ].join(' ');
}

async function runModel(scope: ToolScope, input: TurnInput, endpoint: ModelEndpoint, reply: ReplyBuilder): Promise<Reply> {
  const started = Date.now();
  const metadata = { source: 'model', model: endpoint.model, configScope: endpoint.scope };
  if (endpoint.keyUnreadable) {
    return reply.fail('MODEL_KEY_UNREADABLE', "The model's API key cannot be decrypted with this instance's secret; it must be set again.", metadata);
  }
  const guard = createScopeGuard({ allowedNetworks: scope.ctx.deps.env.SCAN_ALLOWED_NETWORKS });
  const tools = toolDefinitions();
  const messages: ChatMessage[] = [{ role: 'system', content: await systemPrompt(scope) }, ...input.history, { role: 'user', content: input.question }];
  let rounds = 0;
  try {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      rounds = round + 1;
      const last = round === MAX_ROUNDS - 1;
      // Text of a later round continues the reply after a blank line, so the deltas add up to the stored content.
      let separate = reply.text.length > 0;
      const completion = await streamChatCompletion(
        { baseUrl: endpoint.baseUrl, model: endpoint.model, apiKey: endpoint.apiKey, messages, tools, toolChoice: last ? 'none' : 'auto' },
        {
          guard,
          timeoutMs: Math.max(1000, Math.min(MODEL_CALL_TIMEOUT_MS, started + TURN_TIMEOUT_MS - Date.now())),
          idleTimeoutMs: MODEL_IDLE_TIMEOUT_MS,
          maxBytes: MAX_RESPONSE_BYTES,
          onText: (delta) => {
            if (separate) reply.addText('\n\n');
            separate = false;
            reply.addText(delta);
          },
          onThinking: (delta) => reply.addThinking(delta),
        },
      );
      if (!completion.toolCalls.length) return reply.done({ ...metadata, rounds, finishReason: completion.finishReason, durationMs: Date.now() - started });
      if (last) {
        reply.addText(`${reply.text ? '\n\n' : ''}(I stopped after ${MAX_ROUNDS} rounds of tool calls without a final answer.)`);
        break;
      }
      const calls = completion.toolCalls.map((call, index) => ({ ...call, id: call.id.slice(0, 200) || `call_${round}_${index}` }));
      messages.push({
        role: 'assistant',
        content: completion.text || null,
        tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
      });
      for (const [index, call] of calls.entries()) {
        // Every call the model made needs an answer; those past the per-round bound get an error result.
        const outcome: ToolOutcome =
          index < MAX_CALLS_PER_ROUND
            ? await runTool(scope, call.name, call.arguments)
            : { args: {}, result: { error: `At most ${MAX_CALLS_PER_ROUND} tool calls run per round` }, isError: true };
        reply.addToolCall(call.id, call.name || '(unnamed)', outcome);
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(outcome.result) });
      }
    }
    return reply.done({ ...metadata, rounds, finishReason: 'tool_rounds_exhausted', durationMs: Date.now() - started });
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    return reply.fail(error.code, `The language model could not answer: ${error.message}`, { ...metadata, rounds, durationMs: Date.now() - started });
  }
}
