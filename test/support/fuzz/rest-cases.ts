import { nastyString, nastyValue, stringFor, type Random } from './random.js';

type Schema = Record<string, any>;

export interface RestOperation {
  method: string;
  /** OpenAPI path with `{param}` placeholders, relative to /api/v1. */
  path: string;
  parameters: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Schema }[];
  body?: Schema;
  /** Anonymous operations (security: [] or the auth routes). */
  public: boolean;
}

export interface RestCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Which identity the case uses. */
  as: 'owner' | 'anonymous' | 'garbage';
  operation: string;
}

export interface FuzzIdentity {
  workspaceId: string;
  /** Ids seen in earlier responses: real resources make deeper paths reachable. */
  knownIds: string[];
}

export function restOperations(document: { paths: Record<string, Record<string, any>>; components?: Record<string, any> }): RestOperation[] {
  const operations: RestOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        body: operation.requestBody?.content?.['application/json']?.schema,
        public: Array.isArray(operation.security) && operation.security.length === 0,
      });
    }
  }
  return operations;
}

function resolve(schema: Schema | undefined, components: Record<string, any> | undefined): Schema | undefined {
  let current = schema;
  for (let i = 0; current?.$ref && i < 10; i++) current = components?.schemas?.[String(current.$ref).split('/').pop()!];
  return current;
}

/** A value for `schema`: valid-looking most of the time, with a wrong value at some nodes. */
export function valueFor(random: Random, schema: Schema | undefined, components: Record<string, any> | undefined, depth = 0): unknown {
  const resolved = resolve(schema, components);
  if (!resolved || depth > 6) return random.chance(0.5) ? 'x' : 1;
  if (random.chance(0.08)) return nastyValue(random);
  const variants = resolved.anyOf ?? resolved.oneOf;
  if (variants?.length) return valueFor(random, random.pick(variants), components, depth + 1);
  if (resolved.allOf?.length) return valueFor(random, resolved.allOf[0], components, depth + 1);
  if (resolved.const !== undefined) return resolved.const;
  const type = Array.isArray(resolved.type) ? random.pick(resolved.type) : resolved.type;
  switch (type) {
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const [key, property] of Object.entries<Schema>(resolved.properties ?? {})) {
        const required = (resolved.required ?? []).includes(key);
        if (required || random.chance(0.6)) result[key] = valueFor(random, property, components, depth + 1);
      }
      if (random.chance(0.05)) result[random.pick(['extra', '__proto__', 'constructor'])] = nastyValue(random);
      if (resolved.additionalProperties && random.chance(0.5))
        result[stringFor(random, undefined, undefined)] = valueFor(random, resolved.additionalProperties, components, depth + 1);
      return result;
    }
    case 'array': {
      const length = random.pick([0, 1, 2, 3, 20]);
      return Array.from({ length }, () => valueFor(random, resolved.items, components, depth + 1));
    }
    case 'integer':
    case 'number':
      if (random.chance(0.2)) return random.pick([-1, 0, 2 ** 31, 1e12, 0.5]);
      return random.int(resolved.minimum ?? 0, Math.min(resolved.maximum ?? 100, 1_000));
    case 'boolean':
      return random.chance(0.5);
    case 'null':
      return null;
    case 'string':
      if (random.chance(0.1)) return nastyString(random);
      return stringFor(random, resolved.format, resolved.pattern, resolved.enum);
    default:
      return random.chance(0.5) ? stringFor(random, undefined, undefined) : {};
  }
}

function pathValue(random: Random, identity: FuzzIdentity, name: string, operation: RestOperation): string {
  // Never aim destructive workspace operations at the workspace the run lives in: the rest of the run needs it.
  const protect = operation.path.startsWith('/api/workspaces/{id}') && operation.method !== 'GET';
  const ids = protect ? identity.knownIds.filter((id) => id !== identity.workspaceId) : identity.knownIds;
  const choice = random.int(0, 9);
  if (choice < 4 && ids.length) return random.pick(ids);
  if (choice < 6) return random.uuid();
  if (name === 'name' || name === 'step') return random.pick(['fuzz', 'dns', 'ports', 'http', 'a.b', 'x'.repeat(300)]);
  const raw = nastyString(random);
  try {
    return encodeURIComponent(raw) || 'x';
  } catch {
    // A lone surrogate cannot be percent-encoded as UTF-8: send the bytes a broken client would.
    return '%ED%A0%80';
  }
}

function queryValue(random: Random, schema: Schema | undefined, components: Record<string, any> | undefined): string[] {
  const value = random.chance(0.15) ? nastyString(random) : valueFor(random, schema, components);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  return [typeof value === 'string' ? value : JSON.stringify(value)];
}

/** `count` cases for one operation. */
export function restCases(
  random: Random,
  operation: RestOperation,
  identity: FuzzIdentity,
  components: Record<string, any> | undefined,
  count: number,
): RestCase[] {
  const cases: RestCase[] = [];
  for (let i = 0; i < count; i++) {
    let path = operation.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const parameter of operation.parameters) {
      if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, pathValue(random, identity, parameter.name, operation));
      else if (parameter.in === 'query' && (parameter.required || random.chance(0.5))) {
        for (const value of queryValue(random, parameter.schema, components)) query.append(parameter.name, value);
      } else if (parameter.in === 'header' && parameter.name.toLowerCase() === 'x-workspace-id') {
        headers['x-workspace-id'] = random.chance(0.85)
          ? identity.workspaceId
          : random.pick([random.uuid(), 'not-a-uuid', '', ' ', '0', identity.workspaceId.toUpperCase()]);
      } else if (parameter.in === 'header') {
        headers[parameter.name.toLowerCase()] = random.pick(['ptk_invalid', 'x', `ptk_${'a'.repeat(64)}`]);
      }
    }
    if (!headers['x-workspace-id'] && random.chance(0.5)) headers['x-workspace-id'] = identity.workspaceId;
    let body: string | undefined;
    if (operation.body) {
      const shape = random.int(0, 19);
      if (shape === 0) body = undefined;
      else if (shape === 1) body = '[]';
      else if (shape === 2) body = random.pick(['{', 'null', '"x"', '1', `{"a":${'['.repeat(3000)}${']'.repeat(3000)}}`, '\u0000']);
      else body = JSON.stringify(valueFor(random, operation.body, components));
      if (body !== undefined)
        headers['content-type'] = random.chance(0.95)
          ? 'application/json'
          : random.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']);
    } else if (operation.method !== 'GET' && random.chance(0.1)) {
      body = JSON.stringify(nastyValue(random));
      headers['content-type'] = 'application/json';
    }
    const as = operation.public ? random.pick(['owner', 'anonymous'] as const) : random.chance(0.85) ? 'owner' : random.pick(['anonymous', 'garbage'] as const);
    const search = query.toString();
    cases.push({
      method: operation.method,
      path: `/api/v1${path}${search ? `?${search}` : ''}`,
      headers,
      body,
      as,
      operation: `${operation.method} ${operation.path}`,
    });
  }
  return cases;
}
