import { PothosValidationError } from '@pothos/core';
import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import { isUuid } from '../auth/authz.js';
import { ValidationError } from '../errors.js';

/**
 * Ids meet here. Every object GraphQL can fetch by `node(id:)` has two ids: its global id (GraphQL's `id`,
 * REST's `nodeId`: base64 of "<Type>:<uuid>") and its UUID (REST's `id`, GraphQL's `databaseId`). Every id
 * argument accepts either form for its type, through `decodeId`. Pure functions: REST response builders use
 * `nodeIdOf` without loading the schema.
 */
export type NodeTypeName = 'Workspace' | 'Target' | 'Scan' | 'Asset' | 'Finding' | 'Conversation' | 'ScanSchedule';

/** The global id of an object: what GraphQL's `id` returns and REST's `nodeId` carries. */
export function nodeIdOf(typename: NodeTypeName, uuid: string): string {
  return encodeGlobalID(typename, uuid);
}

export interface ParsedId {
  /** The type a global id names; null for a bare UUID, which names none. */
  typename: string | null;
  id: string;
}

/** A bare UUID, or a global id of any type wrapping a UUID; null for anything else. */
export function parseId(value: string): ParsedId | null {
  if (isUuid(value)) return { typename: null, id: value };
  try {
    const { typename, id } = decodeGlobalID(value);
    return isUuid(id) ? { typename, id } : null;
  } catch (error) {
    if (error instanceof PothosValidationError) return null;
    throw error;
  }
}

type TypeRef = { name: string } | null;

function describeExpected(type: TypeRef): string {
  return type ? `a ${type.name} id: its global id (\`id\`) or its UUID (\`databaseId\`)` : 'a UUID';
}

/**
 * The UUID an id argument names. `type` is the node type the argument is for (a ref, so a renamed type cannot
 * drift); null for objects without a global id (members, templates, tools, keys), whose ids are UUIDs only.
 * Anything else, including the global id of another type, is a ValidationError naming the argument: inside a
 * mutation's resolver that is the field's typed `ValidationError` result, not a request-wide error.
 * An absent (null or undefined) optional argument stays absent.
 */
export function decodeId(value: string | number, type: TypeRef, field: string): string;
export function decodeId(value: string | number | null | undefined, type: TypeRef, field: string): string | undefined;
export function decodeId(value: string | number | null | undefined, type: TypeRef, field: string): string | undefined {
  if (value == null) return undefined;
  const parsed = parseId(String(value));
  if (parsed && (parsed.typename === null || parsed.typename === type?.name)) return parsed.id;
  const message = `is not ${describeExpected(type)}`;
  throw new ValidationError(`Invalid input: ${field}: ${message}`, [{ field, message }]);
}

/** `decodeId` for a list argument: a bad entry's field names its index (ids.1); every bad entry is reported. */
export function decodeIds(values: readonly (string | number)[], type: TypeRef, field: string): string[] {
  const issues: { field: string; message: string }[] = [];
  const ids = values.map((value, index) => {
    try {
      return decodeId(value, type, `${field}.${index}`);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...(error.details ?? []));
      return '';
    }
  });
  if (issues.length) throw new ValidationError(`Invalid input: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);
  return ids;
}

/**
 * `decodeId` for query and subscription arguments, which have no typed error results: a malformed id is the
 * client's error (BAD_USER_INPUT), as for every other argument Pothos refuses (a bad cursor, a negative `first`).
 */
export function decodeQueryId(value: string | number, type: TypeRef, field: string): string;
export function decodeQueryId(value: string | number | null | undefined, type: TypeRef, field: string): string | undefined;
export function decodeQueryId(value: string | number | null | undefined, type: TypeRef, field: string): string | undefined {
  try {
    return decodeId(value, type, field);
  } catch (error) {
    if (error instanceof ValidationError) throw new PothosValidationError(error.message);
    throw error;
  }
}
