import fastJsonStringify from 'fast-json-stringify';
import { z } from 'zod';
import { dateTime } from './schemas.js';

/** Writes a procedure's answer as JSON text, keeping only what its output schema declares. */
export type OutputSerializer = (value: unknown) => string;

/** The two sides of `dateTime`: a Date in, and out the one transform a compiled serializer reproduces (Date → ISO text). */
const DATE_TIME = (dateTime as unknown as { _zod: { def: { in: unknown; out: unknown } } })._zod.def;

/**
 * Zod types a JSON schema cannot describe (toJSONSchema writes `{}` for them, which would send the value as it
 * is): a schema holding one keeps tRPC's output check. `date` and `transform` are allowed inside `dateTime` only.
 */
const UNREPRESENTABLE = new Set(['bigint', 'symbol', 'void', 'undefined', 'date', 'map', 'set', 'transform', 'nan', 'custom', 'function', 'promise']);

type JsonSchema = Record<string, unknown>;

/**
 * A route's output schema compiled once into a serializer (fast-json-stringify, from the schema's JSON Schema),
 * or undefined when it cannot be: the schema holds a transform or a type JSON Schema cannot describe.
 *
 * Why: tRPC checks every answer against its output schema (zod builds a stripped copy of the whole page), then
 * JSON.stringify walks it again. The compiled serializer does both in one pass: it writes only the declared
 * properties (what zod's stripping guaranteed: a row with more columns than the schema never leaks them),
 * Dates as ISO text, and throws on a missing required property (answered as 500, as a failed check was). What
 * it does not re-check are refinements of values our own statements produced (a UUID's format, a string's
 * length); in development and tests the handler also runs the zod check and compares (rest/served-procedure.ts).
 */
export function compileOutputSerializer(schema: z.ZodType): OutputSerializer | undefined {
  let representable = true;
  const jsonSchema = z.toJSONSchema(schema, {
    io: 'output',
    target: 'draft-7',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema: written }) => {
      const def = (zodSchema as unknown as { _zod: { def: { type: string; out?: unknown } } })._zod.def;
      if (def.type === 'pipe' && def.out === DATE_TIME.out) {
        for (const key of Object.keys(written)) delete (written as JsonSchema)[key];
        Object.assign(written, { type: 'string', format: 'date-time' });
      } else if (UNREPRESENTABLE.has(def.type) && zodSchema !== DATE_TIME.out && zodSchema !== DATE_TIME.in) {
        representable = false;
      }
    },
  }) as JsonSchema;
  if (!representable) return undefined;
  return fastJsonStringify(simplifyNullable(jsonSchema) as never) as OutputSerializer;
}

/**
 * `anyOf: [X, { type: 'null' }]` (zod's `.nullable()`) as `type: [X's type, 'null']`: the same values, but
 * fast-json-stringify serves a type list directly, while anyOf makes it validate each value to pick a branch.
 */
function simplifyNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simplifyNullable);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) out[key] = simplifyNullable(value);
  const branches = out.anyOf;
  if (Array.isArray(branches) && branches.length === 2 && Object.keys(out).length === 1) {
    const nullIndex = branches.findIndex((branch) => isNullOnly(branch));
    const other = branches[1 - nullIndex] as JsonSchema | undefined;
    if (nullIndex !== -1 && other && typeof other.type === 'string' && !('anyOf' in other) && !('oneOf' in other)) {
      return { ...other, type: [other.type, 'null'] };
    }
  }
  return out;
}

function isNullOnly(branch: unknown): boolean {
  return typeof branch === 'object' && branch !== null && Object.keys(branch).length === 1 && (branch as JsonSchema).type === 'null';
}
