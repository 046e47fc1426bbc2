import type { AnyProcedure, AnyRouter } from '@trpc/server';
import type { RestMeta } from './trpc.js';
import { coerceQueryTypes, inputFields, pinJsonBodyTypes } from './input-coercion.js';

/**
 * The REST routes, read once from the procedures' OpenAPI metadata: which procedure a method and path name,
 * and how its input is put together from the query string or body and the path's parameters.
 *
 * These are trpc-to-openapi's node adapter's matching and input rules (3.x: `createProcedureCache`,
 * `getQuery`, `coerceSchema`), done once at start instead of on every request. Per call, that adapter also
 * built a WHATWG `Request` only to hand the procedure an abort signal, merged and walked the input schema,
 * and tried every route's regular expression in turn. The OpenAPI document still comes from trpc-to-openapi
 * (rest/openapi.ts), from the same metadata, so the document and the routes cannot disagree.
 */

/** What a route match hands the caller. */
export interface RestRoute {
  /** The procedure's path in the router (`targets.list`), which callTRPCProcedure looks up. */
  procedurePath: string;
  type: 'query' | 'mutation';
  /** GET and DELETE take their input from the query string, the other methods from the JSON body. */
  inputFromQuery: boolean;
  /** The procedure takes no input at all (void-like): nothing is read, not even the path's parameters. */
  noInput: boolean;
  /** Query keys whose schema is an array: a single value is wrapped in one. */
  arrayKeys: string[];
  pattern: RegExp;
  /** The template's first two segments (`/api/targets`), by which routes are grouped. */
  templatePrefix: string;
  meta: RestMeta;
  /** 200, or what `meta.successStatus` says (201 for creations, as OASM's NestJS routes answer). */
  successStatus: number;
}

/** `/api/targets/{id}` as trpc-to-openapi matches it: no leading or trailing slash difference, any letter case, a parameter is one segment. */
function pathPattern(path: string): RegExp {
  const normalized = normalizePath(path);
  return new RegExp(`^${normalized.replace(/\{(.+?)\}/g, (_, key: string) => `(?<${key}>[^/]+)`)}$`, 'i');
}

export function normalizePath(path: string): string {
  return `/${path.replace(/^\/|\/$/g, '')}`;
}

export interface RestRouteTable {
  /** The route a method and (normalized) path name, with the path's parameters as written in the URL. */
  match(method: string, path: string): { route: RestRoute; pathInput: Record<string, string> } | undefined;
}

export function buildRouteTable(router: AnyRouter): RestRouteTable {
  const procedures = Object.entries(router._def.procedures as Record<string, AnyProcedure>).flatMap(([procedurePath, procedure]) => {
    const meta = procedure._def.meta as RestMeta | undefined;
    const openapi = meta?.openapi;
    if (!meta || !openapi || openapi.enabled === false || procedure._def.type === 'subscription') return [];
    return [{ procedurePath, procedure, meta, openapi, inputs: procedure._def.inputs as unknown[] }];
  });
  // Every body's typed fields are pinned before any query string's are coerced (input-coercion.ts).
  const pinned = new Set<unknown>();
  for (const { openapi, inputs } of procedures) if (openapi.method !== 'GET') for (const input of inputs) pinJsonBodyTypes(input, pinned);
  const coerced = new Set<unknown>();
  for (const { openapi, inputs } of procedures) if (openapi.method === 'GET') for (const input of inputs) coerceQueryTypes(input, coerced);

  const routesByMethod = new Map<string, RestRoute[]>();
  for (const { procedurePath, procedure, meta, openapi, inputs } of procedures) {
    // Several .input() calls are merged into one object by trpc-to-openapi; ours use one at most.
    if (inputs.length > 1) throw new Error(`REST procedure ${procedurePath} chains ${inputs.length} inputs; give it one object schema`);
    const inputFromQuery = openapi.method === 'GET' || openapi.method === 'DELETE';
    const input = inputFields(inputs[0]);
    const route: RestRoute = {
      procedurePath,
      type: procedure._def.type as RestRoute['type'],
      inputFromQuery,
      noInput: input.kind === 'none',
      arrayKeys: input.kind === 'object' && inputFromQuery ? input.arrayKeys : [],
      pattern: pathPattern(openapi.path),
      templatePrefix: prefixKey(normalizePath(openapi.path)),
      meta,
      successStatus: meta.successStatus ?? 200,
    };
    const routes = routesByMethod.get(openapi.method) ?? [];
    routes.push(route);
    routesByMethod.set(openapi.method, routes);
  }
  const byMethod = new Map([...routesByMethod].map(([method, routes]) => [method, byLiteralPrefix(routes)]));
  return {
    match(method, path) {
      const candidates = byMethod.get(method);
      if (!candidates) return undefined;
      // The first route in the router's order wins where patterns overlap (rest/router.ts orders the modules for it).
      for (const route of candidates.byPrefix.get(prefixKey(path)) ?? candidates.anyPrefix) {
        const found = route.pattern.exec(path);
        if (found) return { route, pathInput: { ...found.groups } };
      }
      return undefined;
    },
  };
}

/** A path's first two segments (`/api/targets`), lower-cased as the patterns match them. */
function prefixKey(path: string): string {
  const second = path.indexOf('/', 1);
  const end = second === -1 ? -1 : path.indexOf('/', second + 1);
  return (end === -1 ? path : path.slice(0, end)).toLowerCase();
}

/**
 * Routes grouped by their first two segments, so a request tries the few routes of its own module and not all
 * of them. A route whose prefix holds a parameter could match any prefix: it stays in every group, in its
 * place, so the first match is the same route as in one list.
 */
function byLiteralPrefix(routes: RestRoute[]): { byPrefix: Map<string, RestRoute[]>; anyPrefix: RestRoute[] } {
  const literal = (route: RestRoute) => !route.templatePrefix.includes('{');
  const byPrefix = new Map<string, RestRoute[]>();
  for (const route of routes.filter(literal)) {
    const key = route.templatePrefix;
    if (!byPrefix.has(key))
      byPrefix.set(
        key,
        routes.filter((other) => !literal(other) || other.templatePrefix === key),
      );
  }
  return { byPrefix, anyPrefix: routes.filter((route) => !literal(route)) };
}

/** The query string as trpc-to-openapi hands it to a procedure: a repeated key is an array, a single one its value. */
export function queryInput(searchParams: URLSearchParams, arrayKeys: readonly string[]): Record<string, string | string[]> {
  // No prototype: a `__proto__` key is a key like any other (the input schema then refuses it).
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of searchParams) {
    const seen = query[key];
    if (seen === undefined) query[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else query[key] = [seen, value];
  }
  for (const key of arrayKeys) {
    const value = query[key];
    if (value !== undefined && !Array.isArray(value)) query[key] = [value];
  }
  return query;
}
