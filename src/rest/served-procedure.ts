import { isDeepStrictEqual } from 'node:util';
import { getTRPCErrorFromUnknown, TRPCError, type AnyProcedure } from '@trpc/server';
import type { z } from 'zod';
import { compileOutputSerializer, type OutputSerializer } from './output-serializer.js';
import { SerializedPage, type Page } from '../pagination.js';
import type { RestContext, RestMeta } from './trpc.js';

/** One link of a procedure's tRPC middleware chain (gates, input check, output check, resolver). */
type Middleware = ((opts: MiddlewareOptions) => Promise<MiddlewareResult>) & { _type?: string };
type MiddlewareResult = { ok: true; data: unknown; ctx?: unknown } | { ok: false; error: TRPCError };
interface MiddlewareOptions {
  ctx: RestContext;
  type: 'query' | 'mutation';
  path: string;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  meta: RestMeta | undefined;
  signal: undefined;
  batchIndex: number;
  next: (options?: { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> }) => Promise<MiddlewareResult>;
}

export type ProcedureOutcome = { ok: true; data: unknown; json: string } | { ok: false; error: unknown };

/** Output schemas compiled so far, shared by every app in the process (tests build many). */
const serializers = new WeakMap<z.ZodType, OutputSerializer | null>();

function serializerFor(schema: z.ZodType): OutputSerializer | null {
  let serializer = serializers.get(schema);
  if (serializer === undefined) {
    serializer = compileOutputSerializer(schema) ?? null;
    serializers.set(schema, serializer);
  }
  return serializer;
}

/**
 * A REST procedure as the handler calls it: its own tRPC middlewares (gates, input check, resolver) in their
 * order, run by a loop of ours that follows tRPC's own (context merged at each `next`), so that a query can
 * leave out the output check: tRPC runs every middleware a procedure was built with.
 *
 * A query answers through its output schema compiled once (rest/output-serializer.ts) instead of tRPC's
 * output check followed by JSON.stringify: the check built a stripped copy of the whole page, which the
 * serializer writes directly, keeping only the declared properties. With `verifyOutput` (development and tests),
 * the zod check runs as well and the two must agree: a mismatch is a failure (500), so a serializer that
 * would send more or other than the schema allows cannot pass the suite. A mutation keeps tRPC's output
 * check: its checked result is also what its audit entry names (rest/audit-edge.ts).
 */
export function servedProcedure(path: string, procedure: AnyProcedure, options: { verifyOutput: boolean }) {
  const def = procedure._def as unknown as { type: string; meta?: RestMeta; middlewares: Middleware[]; output?: z.ZodType };
  if (def.type !== 'query' && def.type !== 'mutation') throw new Error(`REST procedure ${path} is a ${def.type}: REST serves queries and mutations`);
  const type: 'query' | 'mutation' = def.type;
  const outputSchema = type === 'query' ? def.output : undefined;
  const withoutOutputCheck = def.middlewares.filter((link) => link._type !== 'output');

  async function run(chain: Middleware[], index: number, linkOptions: Omit<MiddlewareOptions, 'next' | 'meta'>): Promise<MiddlewareResult> {
    try {
      const link = chain[index];
      if (!link) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: `${path}: no result from its middlewares` });
      return await link({
        ...linkOptions,
        meta: def.meta,
        next: (nextOptions) =>
          run(chain, index + 1, {
            ...linkOptions,
            ctx: nextOptions?.ctx ? { ...linkOptions.ctx, ...nextOptions.ctx } : linkOptions.ctx,
            input: nextOptions && 'input' in nextOptions ? nextOptions.input : linkOptions.input,
            getRawInput: nextOptions?.getRawInput ?? linkOptions.getRawInput,
          }),
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) };
    }
  }

  // Compiled at the route's first request, not at start: the hundred-odd schemas take about 0.1 s.
  let compiled: OutputSerializer | null | undefined;
  return async function call(ctx: RestContext, input: unknown): Promise<ProcedureOutcome> {
    if (compiled === undefined) compiled = outputSchema ? serializerFor(outputSchema) : null;
    const serialize = compiled;
    const chain = serialize ? withoutOutputCheck : def.middlewares;
    const result = await run(chain, 0, { ctx, type, path, input, getRawInput: async () => input, signal: undefined, batchIndex: 0 });
    if (!result.ok) return result;
    try {
      if (result.data instanceof SerializedPage) {
        const json = writeSerializedPage(path, serialize, result.data);
        if (options.verifyOutput) verifyWrittenPage(path, serialize!, json);
        return { ok: true, data: result.data, json };
      }
      const json = serialize ? serialize(result.data) : JSON.stringify(result.data);
      if (serialize && options.verifyOutput) verifyAgainstSchema(path, outputSchema!, result.data, json);
      return { ok: true, data: result.data, json };
    } catch (cause) {
      return { ok: false, error: new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed', cause }) };
    }
  };
}

export type ServedProcedure = ReturnType<typeof servedProcedure>;

/** The zod check's answer and the serializer's must be the same JSON; anything else is our bug. */
function verifyAgainstSchema(path: string, schema: z.ZodType, data: unknown, json: string): void {
  const checked = JSON.parse(JSON.stringify(schema.parse(data)));
  if (!isDeepStrictEqual(checked, JSON.parse(json))) {
    throw new Error(
      `${path}: the compiled output serializer wrote ${json.slice(0, 500)} where the output schema gives ${JSON.stringify(checked).slice(0, 500)}`,
    );
  }
}

/**
 * A query's answer that a statement wrote (pagination.ts, SerializedPage): tRPC types an answer as its output
 * schema's shape, and the page stands for that shape; only the served procedure below reads it.
 */
export function writtenByStatement<T>(page: Promise<SerializedPage<T>>): Promise<Page<T>> {
  return page as unknown as Promise<Page<T>>;
}

const EMPTY_DATA = '{"data":[]';

/** The envelope through the route's serializer (every field as its schema writes it), the statement's items as `data`. */
function writeSerializedPage(path: string, serialize: OutputSerializer | null, page: SerializedPage<unknown>): string {
  const envelope = serialize?.(page.envelope);
  if (!envelope?.startsWith(EMPTY_DATA)) throw new Error(`${path}: a serialized page needs a page schema with \`data\` first`);
  return `{"data":${page.itemsJson}${envelope.slice(EMPTY_DATA.length)}`;
}

/**
 * The statement's text must be what the route's serializer would write for it: written again through the
 * serializer, it holds the same values (nothing undeclared, nothing required missing, no value of another type).
 */
function verifyWrittenPage(path: string, serialize: OutputSerializer, json: string): void {
  const sent = JSON.parse(json);
  const rewritten = JSON.parse(serialize(sent));
  if (!isDeepStrictEqual(sent, rewritten)) {
    throw new Error(`${path}: the statement wrote ${json.slice(0, 500)} where the output schema gives ${JSON.stringify(rewritten).slice(0, 500)}`);
  }
}
