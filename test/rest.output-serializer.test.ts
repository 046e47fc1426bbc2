import { describe, expect, it } from 'vitest';
import { initTRPC, type AnyProcedure } from '@trpc/server';
import { z } from 'zod';
import { restRouter } from '../src/rest/router.js';
import { compileOutputSerializer } from '../src/rest/output-serializer.js';
import { servedProcedure } from '../src/rest/served-procedure.js';
import { dateTime, pageSchema } from '../src/rest/schemas.js';
import type { RestContext } from '../src/rest/trpc.js';

const item = z.object({
  id: z.string().uuid(),
  kind: z.enum(['host', 'service']),
  seenAt: dateTime,
  fixedAt: dateTime.nullable(),
  count: z.number().int(),
  score: z.number().nullable(),
  tags: z.array(z.string()),
  data: z.record(z.string(), z.unknown()),
  anything: z.unknown(),
  parent: z.object({ id: z.string(), name: z.string().nullable() }).nullable(),
  note: z.string().optional(),
  mode: z.string().default('auto'),
  either: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]),
});
const page = pageSchema(item);

const row = (overrides: Record<string, unknown> = {}) => ({
  id: '3f0c2a4e-8a57-4a83-9c1a-0d2b2f1e9c11',
  kind: 'host',
  seenAt: new Date('2026-11-25T10:11:12.345Z'),
  fixedAt: null,
  count: 3,
  score: 7.5,
  tags: ['a', 'b "quoted"', 'ü\u2028'],
  data: { ips: ['127.0.0.1'], nested: { deep: [1, null, true] } },
  anything: [{ x: 1 }, 'two'],
  parent: { id: 'p', name: null, secret: 'not declared' },
  either: { b: 2 },
  passwordHash: 'not declared either',
  ...overrides,
});

describe('compiled REST output serializer', () => {
  const serialize = compileOutputSerializer(page)!;
  const viaZod = (value: unknown) => JSON.parse(JSON.stringify(page.parse(value)));

  it('writes what the zod output check and JSON.stringify wrote, undeclared properties dropped at every level', () => {
    const values = [
      {
        data: [row(), row({ fixedAt: new Date(0), score: null, parent: null, note: 'n', mode: 'manual', either: { a: 'x' } })],
        total: 2,
        page: 1,
        limit: 20,
        hasNextPage: false,
        pageCount: 1,
        extra: 1,
      },
      { data: [], total: 0, page: 1, limit: 20, hasNextPage: false, pageCount: 0 },
    ];
    for (const value of values) {
      const json = serialize(value);
      expect(JSON.parse(json)).toEqual(viaZod(value));
      expect(json).not.toContain('not declared');
      expect(json).not.toContain('"extra"');
    }
    expect(JSON.parse(serialize(values[0]!)).data[0].seenAt).toBe('2026-11-25T10:11:12.345Z');
  });

  it('refuses an answer missing a required property, as the check did', () => {
    const { count: _count, ...withoutCount } = row();
    expect(() => serialize({ data: [withoutCount], total: 1, page: 1, limit: 20, hasNextPage: false, pageCount: 1 })).toThrow();
  });

  it('keeps the zod check for a schema it cannot reproduce (a transform other than dateTime)', () => {
    expect(compileOutputSerializer(z.object({ name: z.string().transform((value) => value.toUpperCase()) }))).toBeUndefined();
    expect(compileOutputSerializer(z.object({ at: z.date() }))).toBeUndefined();
  });

  it("compiles every REST query's output schema", () => {
    const queries = Object.entries(restRouter._def.procedures as unknown as Record<string, AnyProcedure>).filter(
      ([, procedure]) => procedure._def.type === 'query',
    );
    expect(queries.length).toBeGreaterThan(40);
    const notCompiled = queries
      .filter(([, procedure]) => !compileOutputSerializer((procedure._def as unknown as { output: z.ZodType }).output))
      .map(([path]) => path);
    expect(notCompiled).toEqual([]);
  });
});

describe('served REST procedure', () => {
  const t = initTRPC.context<RestContext>().create();
  const ctx = {} as RestContext;
  const answering = (data: unknown) =>
    t.procedure.output(z.object({ id: z.string().uuid(), at: dateTime })).query(() => data as never) as unknown as AnyProcedure;

  it('answers through the compiled serializer, without undeclared properties', async () => {
    const procedure = servedProcedure('test.read', answering({ id: '3f0c2a4e-8a57-4a83-9c1a-0d2b2f1e9c11', at: new Date(0), hidden: 'x' }), {
      verifyOutput: true,
    });
    const outcome = await procedure(ctx, undefined);
    expect(outcome.ok && JSON.parse(outcome.json)).toEqual({ id: '3f0c2a4e-8a57-4a83-9c1a-0d2b2f1e9c11', at: '1970-01-01T00:00:00.000Z' });
  });

  it('with verifyOutput, an answer the zod check refuses is a failure even where the serializer would write it', async () => {
    const notAUuid = answering({ id: 'not-a-uuid', at: new Date(0) });
    expect((await servedProcedure('test.read', notAUuid, { verifyOutput: false })(ctx, undefined)).ok).toBe(true);
    const verified = await servedProcedure('test.read', notAUuid, { verifyOutput: true })(ctx, undefined);
    expect(verified.ok).toBe(false);
    expect(!verified.ok && (verified.error as Error).message).toBe('Output validation failed');
  });

  it('a missing required property fails with or without verifyOutput', async () => {
    const missing = answering({ id: '3f0c2a4e-8a57-4a83-9c1a-0d2b2f1e9c11' });
    expect((await servedProcedure('test.read', missing, { verifyOutput: false })(ctx, undefined)).ok).toBe(false);
  });

  it('a mutation keeps tRPC output check (its checked result names the audited entities)', async () => {
    const mutation = t.procedure.output(z.object({ id: z.string() })).mutation(() => ({ id: 'a', hidden: 'x' })) as unknown as AnyProcedure;
    const outcome = await servedProcedure('test.write', mutation, { verifyOutput: false })(ctx, undefined);
    expect(outcome.ok && outcome.data).toEqual({ id: 'a' });
    expect(outcome.ok && outcome.json).toBe('{"id":"a"}');
  });
});
