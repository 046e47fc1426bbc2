import { defaultFieldResolver, GraphQLError, type GraphQLSchema } from 'graphql';
import { PothosValidationError } from '@pothos/core';
import { errorTypeMap } from '@pothos/plugin-errors';
import type { ServiceContext } from '../context.js';
import { AppError, ERROR_STATUS } from '../errors.js';
import { parseId } from './ids.js';
import { entityIdsOf, recordRequestWrite, workspaceOf } from '../modules/audit/record.js';

const wrapped = new WeakSet<GraphQLSchema>();

/** The error code an entry records: our codes as they are, a refused argument as the client's, anything else INTERNAL. */
function outcomeOf(error: unknown): string {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof AppError) return original.code;
  // The errors plugin's proxy of an AppError is not an instance of it, but reads through to its code.
  const code = (original as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in ERROR_STATUS) return code;
  if (original instanceof PothosValidationError) return 'BAD_USER_INPUT';
  if (original instanceof GraphQLError && typeof original.extensions.code === 'string') return original.extensions.code;
  return 'INTERNAL';
}

/**
 * The UUIDs an argument list names, global ids decoded: top-level arguments and the fields of an `input`
 * object, where named id, ids or *Id. Anything that is not an id of ours is left out, never stored.
 */
function decodedIds(args: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  const input = args.input && typeof args.input === 'object' && !Array.isArray(args.input) ? (args.input as Record<string, unknown>) : {};
  for (const [key, value] of Object.entries({ ...input, ...args })) {
    const decode = (item: unknown) => (typeof item === 'string' ? parseId(item)?.id : undefined);
    flat[key] = Array.isArray(value) ? value.map(decode) : decode(value);
  }
  return flat;
}

/**
 * One audit entry per mutation field executed (a document with three mutations writes three), over HTTP and
 * the websocket alike. The field's outermost resolver is wrapped, so the result is seen after the errors
 * plugin turned a failure into a typed error result: that error's code is the entry's outcome. The entry is
 * written before the field's value is returned (one INSERT); its failure is logged, never the client's.
 */
export function auditMutations(schema: GraphQLSchema): GraphQLSchema {
  const mutationType = schema.getMutationType();
  if (!mutationType || wrapped.has(schema)) return schema;
  wrapped.add(schema);
  for (const field of Object.values(mutationType.getFields())) {
    const resolve = field.resolve ?? defaultFieldResolver;
    const operation = `mutation ${field.name}`;
    field.resolve = async (source, args: Record<string, unknown>, context: ServiceContext, info) => {
      const ids = decodedIds(args);
      const named = typeof ids.workspaceId === 'string' ? ids.workspaceId : undefined;
      const record = (outcome: string, result?: unknown) =>
        recordRequestWrite(context, {
          surface: 'graphql',
          operation,
          workspaceId: workspaceOf(context, [named]),
          entityIds: entityIdsOf(ids, result),
          outcome,
        });
      let result: unknown;
      try {
        result = await resolve(source, args, context, info);
      } catch (error) {
        await record(outcomeOf(error));
        throw error;
      }
      // The errors plugin answers a failure as a (proxied) error object, the field's typed error result.
      const failed = result instanceof Error || (typeof result === 'object' && result !== null && errorTypeMap.has(result));
      await record(failed ? outcomeOf(result) : 'success', failed ? undefined : result);
      return result;
    };
  }
  return schema;
}
