import { describe, expect, it } from 'vitest';
import type { AnyProcedure } from '@trpc/server';
import { restRouter } from '../src/rest/router.js';
import { buildRouteTable, normalizePath, queryInput } from '../src/rest/openapi-routes.js';
import type { RestMeta } from '../src/rest/trpc.js';

/** trpc-to-openapi's matching, as its node adapter does it: every route of the method in order, the first whose pattern matches. */
function referenceRoutes() {
  return Object.entries(restRouter._def.procedures as unknown as Record<string, AnyProcedure>).flatMap(([path, procedure]) => {
    const openapi = (procedure._def.meta as RestMeta | undefined)?.openapi;
    if (!openapi || openapi.enabled === false) return [];
    const template = normalizePath(openapi.path);
    const pattern = new RegExp(`^${template.replace(/\{(.+?)\}/g, (_, key: string) => `(?<${key}>[^/]+)`)}$`, 'i');
    return [{ path, method: openapi.method, template, pattern }];
  });
}

function referenceMatch(method: string, path: string) {
  const route = referenceRoutes().find((candidate) => candidate.method === method && candidate.pattern.test(path));
  return route && { procedurePath: route.path, pathInput: { ...route.pattern.exec(path)?.groups } };
}

describe('REST route table', () => {
  const table = buildRouteTable(restRouter);
  const routes = referenceRoutes();
  const filled = (template: string, value: string) => template.replace(/\{(.+?)\}/g, value);
  const samples = routes.flatMap(({ method, template }) => [
    { method, path: filled(template, '3f0c2a4e-8a57-4a83-9c1a-0d2b2f1e9c11') },
    { method, path: filled(template, 'bulk') },
    { method, path: filled(template, 'api-keys') },
    { method, path: filled(template, '%E2%9C%93') },
    { method, path: filled(template, 'x').toUpperCase() },
    { method, path: `${filled(template, 'x')}/extra` },
    { method: method === 'GET' ? 'DELETE' : 'GET', path: filled(template, 'x') },
  ]);

  it('serves every OpenAPI procedure', () => {
    expect(routes.length).toBeGreaterThan(100);
    for (const { method, template, path } of routes)
      expect(table.match(method, filled(template, 'x'))?.route.procedurePath, `${method} ${template}`).toBe(path);
  });

  it('picks the same route, with the same path parameters, as trpc-to-openapi for every path', () => {
    const unknown = [
      { method: 'GET', path: '/' },
      { method: 'GET', path: '/api' },
      { method: 'GET', path: '/nope/targets' },
      { method: 'PATCH', path: '/api/nothing-here' },
      { method: 'HEAD', path: '/api/targets' },
    ];
    for (const { method, path } of [...samples, ...unknown]) {
      const found = table.match(method, path);
      const expected = referenceMatch(method, path);
      expect(found && { procedurePath: found.route.procedurePath, pathInput: found.pathInput }, `${method} ${path}`).toEqual(expected);
    }
  });

  it('takes the input of GET and DELETE from the query string and of the other methods from the body', () => {
    const list = table.match('GET', '/api/targets');
    const create = table.match('POST', '/api/targets');
    expect(list?.route).toMatchObject({ inputFromQuery: true, type: 'query', successStatus: 200 });
    expect(create?.route).toMatchObject({ inputFromQuery: false, type: 'mutation', successStatus: 201 });
  });
});

describe('REST query input', () => {
  it('gives a single value as itself, a repeated key as an array, and wraps a single value of an array field', () => {
    const params = new URLSearchParams('limit=5&tag=a&tag=b&ids=one&search=%20x%20');
    expect({ ...queryInput(params, ['ids']) }).toEqual({ limit: '5', tag: ['a', 'b'], ids: ['one'], search: ' x ' });
  });

  it('keeps `__proto__` a key like any other, for the input schema to refuse', () => {
    const input = queryInput(new URLSearchParams('__proto__=a&__proto__=b&constructor=c'), []);
    expect(Object.keys(input).sort()).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf({ ...input })).toBe(Object.prototype);
    expect({ ...input }.constructor).toBe('c');
  });
});
