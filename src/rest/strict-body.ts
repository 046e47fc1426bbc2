/**
 * trpc-to-openapi marks the number, boolean, bigint and date fields of every procedure input as coercing
 * (right for query strings, which are text). For JSON bodies that is wrong: `"false"` would become `true`
 * and `"5"` a number. For procedures that take a body, pin those fields to non-coercing, so a JSON value of
 * the wrong type is a 400 naming the field.
 */
type AnySchema = { _zod?: { def?: Record<string, unknown> & { type?: string } } };

const COERCIBLE = new Set(['number', 'boolean', 'bigint', 'date']);
const WRAPPERS = new Set(['nullable', 'optional', 'default', 'prefault']);

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

function pinShape(schema: AnySchema, seen: Set<unknown>): void {
  const def = schema._zod?.def;
  if (def?.type !== 'object' || seen.has(def)) return;
  seen.add(def);
  for (const field of Object.values(def.shape as Record<string, AnySchema>)) {
    const inner = unwrap(field);
    const innerDef = inner._zod?.def;
    if (!innerDef) continue;
    if (innerDef.type && COERCIBLE.has(innerDef.type)) {
      // One field schema may sit in several objects (a shared sub-schema re-wrapped by .meta()): pin it once.
      if (seen.has(innerDef)) continue;
      seen.add(innerDef);
      Object.defineProperty(innerDef, 'coerce', { get: () => false, set: () => undefined, configurable: false });
    } else if (innerDef.type === 'object') {
      pinShape(inner, seen);
    }
  }
}

export function keepBodyTypesStrict(procedures: Record<string, unknown>): void {
  const seen = new Set<unknown>();
  for (const procedure of Object.values(procedures)) {
    const { meta, inputs } = (procedure as { _def: { meta?: { openapi?: { method?: string } }; inputs?: AnySchema[] } })._def;
    const method = meta?.openapi?.method;
    if (!method || method === 'GET') continue;
    for (const input of inputs ?? []) pinShape(unwrap(input), seen);
  }
}
