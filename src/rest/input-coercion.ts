/**
 * Which input fields are read from text. A query string only carries text, so the number, boolean, bigint and
 * date fields of a GET operation's input coerce (`?limit=5`), as trpc-to-openapi's adapter made them. A JSON
 * body carries typed values, so for every other operation those fields are pinned to non-coercing: `"false"`
 * would otherwise become `true` and `"5"` a number, where the client should get a 400 naming the field.
 *
 * Zod keeps the flag on the field's schema, and one field schema may sit in several inputs (a shared
 * sub-schema, re-wrapped by .meta()). Pinning makes the flag refuse later writes, so a schema a body shares
 * with a query stays strict; the route table (openapi-routes.ts) pins every body before it coerces any query.
 */
type AnySchema = { _zod?: { def?: Record<string, unknown> & { type?: string } } };

const COERCIBLE = new Set(['number', 'boolean', 'bigint', 'date']);
const WRAPPERS = new Set(['nullable', 'optional', 'default', 'prefault']);

/** The schema a value is checked against once arrays, optional, nullable, default and lazy are looked through. */
function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (let depth = 0; depth < 20; depth++) {
    const def = current._zod?.def;
    if (!def) return current;
    if (def.type === 'array') current = def.element as AnySchema;
    else if (def.type && WRAPPERS.has(def.type)) current = def.innerType as AnySchema;
    else if (def.type === 'lazy') current = (def.getter as () => AnySchema)();
    else return current;
  }
  return current;
}

/** An operation's input schema itself: also through a top-level transform, to the object it reads. */
function unwrapInput(input: unknown): AnySchema {
  let current = unwrap(input as AnySchema);
  for (let depth = 0; depth < 20 && current._zod?.def?.type === 'pipe'; depth++) {
    const { in: from, out: to } = current._zod.def as { in: AnySchema; out: AnySchema };
    current = unwrap(to._zod?.def?.type === 'transform' ? from : to);
  }
  return current;
}

/** Calls `visit` once for each coercible field schema of an object input, nested objects included. */
function forEachCoercibleField(schema: AnySchema, seen: Set<unknown>, visit: (def: Record<string, unknown>) => void): void {
  const def = schema._zod?.def;
  if (def?.type !== 'object' || seen.has(def)) return;
  seen.add(def);
  for (const field of Object.values(def.shape as Record<string, AnySchema>)) {
    const inner = unwrap(field);
    const innerDef = inner._zod?.def;
    if (!innerDef) continue;
    if (innerDef.type && COERCIBLE.has(innerDef.type)) {
      if (seen.has(innerDef)) continue;
      seen.add(innerDef);
      visit(innerDef);
    } else if (innerDef.type === 'object') {
      forEachCoercibleField(inner, seen, visit);
    }
  }
}

/** A body's typed fields stay typed, whatever a query string sharing them does later. */
export function pinJsonBodyTypes(input: unknown, seen: Set<unknown>): void {
  forEachCoercibleField(unwrapInput(input), seen, (def) => {
    // Pinned already (by another route table over the same schemas): a pinned flag cannot be redefined.
    if (Object.getOwnPropertyDescriptor(def, 'coerce')?.get) return;
    Object.defineProperty(def, 'coerce', { get: () => false, set: () => undefined, configurable: false });
  });
}

/** A query string's fields are read from text (a pinned field ignores this). */
export function coerceQueryTypes(input: unknown, seen: Set<unknown>): void {
  forEachCoercibleField(unwrapInput(input), seen, (def) => {
    def.coerce = true;
  });
}

/** The fields of an object input whose schema is a list (optionally absent): a query string's single value for one is a list of one. */
export function arrayFieldKeys(input: unknown): string[] {
  const def = unwrapInput(input)._zod?.def;
  if (def?.type !== 'object') return [];
  return Object.entries(def.shape as Record<string, AnySchema>).flatMap(([key, field]) => {
    const fieldDef = field._zod?.def;
    const listed = fieldDef?.type === 'optional' ? (fieldDef.innerType as AnySchema)._zod?.def : fieldDef;
    return listed?.type === 'array' ? [key] : [];
  });
}

/** What an operation's input is: none (a void-like schema), an object with these list fields, or something else. */
export function inputFields(input: unknown): { kind: 'none' } | { kind: 'object'; arrayKeys: string[] } | { kind: 'other' } {
  // No schema: trpc-to-openapi reads it as an empty object.
  if (input === undefined) return { kind: 'object', arrayKeys: [] };
  const type = unwrapInput(input)._zod?.def?.type;
  if (type === 'void' || type === 'undefined' || type === 'never') return { kind: 'none' };
  return type === 'object' ? { kind: 'object', arrayKeys: arrayFieldKeys(input) } : { kind: 'other' };
}
