import { restRouter } from '../rest/router.js';
import { REST_PREFIX } from '../rest/openapi.js';
import { AUTH_BASE_PATH } from '../auth/better-auth.js';
import { LOGO_ROUTE } from '../modules/system-configs/service.js';
import { AGENT_STREAM_ROUTE } from '../modules/agents/stream-route.js';
import { MCP_MESSAGES_PATH, MCP_PATH, MCP_SSE_PATH } from '../modules/mcp/endpoint.js';

/** The one label of every path no route serves: anonymous requests cannot grow the metrics. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Routes served outside the REST procedures; each is its own template. */
const FIXED_ROUTES = [
  '/graphql',
  '/health',
  '/ready',
  '/metrics',
  `${REST_PREFIX}/openapi.json`,
  `${REST_PREFIX}/docs`,
  LOGO_ROUTE,
  AGENT_STREAM_ROUTE,
  MCP_PATH,
  MCP_SSE_PATH,
  MCP_MESSAGES_PATH,
];

/** Prefixes whose sub-paths share one label: static documentation assets and the auth library's own routes. */
const PREFIX_ROUTES = [`${REST_PREFIX}/docs/`, `${AUTH_BASE_PATH}/`];

interface Template {
  label: string;
  pattern: RegExp;
  /** Fewer parameters first: `/workspaces/api-keys` wins over `/workspaces/{id}`. */
  parameters: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Maps a request path to the route template that serves it, built once from the REST procedures'
 * `meta.openapi.path` and the fixed routes. Parameters are shown as `:name` (`/api/v1/api/scans/:id`),
 * so an id never becomes a label; a path no route serves is `unmatched`.
 */
export function createRouteMatcher(): (path: string) => string {
  const exact = new Map<string, string>(FIXED_ROUTES.map((route) => [route, route]));
  const templates: Template[] = [];
  for (const procedure of Object.values(restRouter._def.procedures)) {
    const openapi = (procedure as unknown as { _def: { meta?: { openapi?: { path?: string } } } })._def.meta?.openapi;
    if (!openapi?.path) continue;
    const path = `${REST_PREFIX}${openapi.path}`.replace(/\/$/, '');
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
    const label = path.replace(/\{(\w+)\}/g, ':$1');
    if (names.length === 0) {
      exact.set(path, label);
      continue;
    }
    const source = path
      .split(/\{\w+\}/)
      .map(escapeRegExp)
      .join('[^/]+');
    templates.push({ label, pattern: new RegExp(`^${source}$`), parameters: names.length });
  }
  templates.sort((a, b) => a.parameters - b.parameters);

  return (rawPath: string) => {
    const path = rawPath.length > 1 ? rawPath.replace(/\/+$/, '') : rawPath;
    const fixed = exact.get(path);
    if (fixed) return fixed;
    for (const template of templates) if (template.pattern.test(path)) return template.label;
    for (const prefix of PREFIX_ROUTES) if (path.startsWith(prefix)) return `${prefix}*`;
    return UNMATCHED_ROUTE;
  };
}
