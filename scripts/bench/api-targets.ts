// What `npm run bench:api` loads: each list page over REST, GraphQL POST and GET and the bare baseline, the
// seed's OASM-style workspace query, and the requests of the large-workspace case. Pure data: api.ts runs them.
import { expectOk, fetchText, type Target } from './api-lib.js';

export const PAGE_LIMIT = 20;
export const ENDPOINTS = ['workspaces', 'targets', 'assets', 'vulnerabilities', 'messages'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export interface Ids {
  workspaceId: string;
  conversationId: string;
}

/** The REST path of each page (filters included). */
export function restPath(endpoint: Endpoint, ids: Ids): string {
  switch (endpoint) {
    case 'workspaces':
      return `/api/v1/api/workspaces?limit=${PAGE_LIMIT}`;
    case 'targets':
      return `/api/v1/api/targets?limit=${PAGE_LIMIT}`;
    case 'assets':
      return `/api/v1/api/assets?limit=${PAGE_LIMIT}&kind=host&enabled=true`;
    case 'vulnerabilities':
      return `/api/v1/api/vulnerabilities?limit=${PAGE_LIMIT}&severity=high&status=open`;
    case 'messages':
      return `/api/v1/api/agents/conversations/${ids.conversationId}/messages?limit=${PAGE_LIMIT}`;
  }
}

/** The same page over GraphQL, the same fields as far as the schema has them. */
export function graphqlQuery(endpoint: Endpoint, ids: Ids): string {
  const ws = JSON.stringify(ids.workspaceId);
  switch (endpoint) {
    case 'workspaces':
      return `query Page { workspaces(first: ${PAGE_LIMIT}) { totalCount edges { node { databaseId name description createdAt updatedAt archivedAt isAssetsDiscovery isAutoEnableAssetAfterDiscovered ownerId targetCount memberCount role members { id role createdAt updatedAt user { id name image } } } } } }`;
    case 'targets':
      return `query Page { workspace(id: ${ws}) { targets(first: ${PAGE_LIMIT}) { totalCount edges { node { databaseId id value type lastScannedAt createdAt updatedAt assetCount findingCount } } } } }`;
    case 'assets':
      return `query Page { workspace(id: ${ws}) { assets(first: ${PAGE_LIMIT}, kind: host, enabled: true) { totalCount edges { node { databaseId id kind key value data enabled firstSeenAt lastSeenAt references dismissed dismissedAt discovery { source from fromAssetId scanId firstSeenAt lastSeenAt } } } } } }`;
    case 'vulnerabilities':
      return `query Page { workspace(id: ${ws}) { findings(first: ${PAGE_LIMIT}, severity: [high], status: open) { totalCount edges { node { databaseId id fingerprint checkId source name severity description remediation matcher status evidence classification occurrences firstSeenAt lastSeenAt fixedAt dismissReason dismissComment dismissedAt } } } } }`;
    case 'messages':
      return `query Page { conversation(id: ${JSON.stringify(ids.conversationId)}) { messages(last: ${PAGE_LIMIT}) { totalCount edges { node { id conversationId role content messageType createdAt metadata parts toolCalls { toolCallId toolName args result isError } } } } } }`;
  }
}

/** The connection inside a GraphQL answer, whatever the endpoint; ids sorted (GraphQL lists messages oldest first, REST newest first). */
export function graphqlConnection(data: Record<string, unknown>): { totalCount: number; ids: string[] } {
  let node = data as Record<string, unknown>;
  while (node && !('totalCount' in node)) node = Object.values(node)[0] as Record<string, unknown>;
  const connection = node as { totalCount: number; edges: Array<{ node: { databaseId?: string; id: string } }> };
  return { totalCount: connection.totalCount, ids: connection.edges.map(({ node: item }) => item.databaseId ?? item.id).sort() };
}

/** The seed's first request, as OASM's users send it. */
export const OASM_REST_PATH = '/api/v1/api/workspaces?page=1&limit=10&sortBy=createdAt&sortOrder=DESC&isArchived=false';
export const OASM_GRAPHQL = `query Page { workspaces(first: 10, isArchived: false, orderBy: { field: createdAt, direction: DESC }) { totalCount edges { node { databaseId name description createdAt updatedAt archivedAt isAssetsDiscovery isAutoEnableAssetAfterDiscovered ownerId targetCount memberCount role members { id role createdAt updatedAt user { id name image } } } } } }`;

/**
 * The floor of each surface: its cheapest signed-in request, no statement at all (the viewer comes from the
 * auth cache), against the bare server's /ready. No page can be served faster than its surface's floor, so
 * floor REST / a page's bare figure bounds what REST / bare can reach for that page, whatever the SQL.
 */
export const FLOOR_REST_PATH = '/api/v1/api/version';
export const FLOOR_GRAPHQL = '{ __typename }';

/** The large-workspace case: the same requests against the 1,000-row and the 100,000-finding workspace. */
export const LARGE_REQUESTS: Array<{ key: string; label: string; path: string }> = [
  { key: 'assets', label: 'assets list', path: `/api/v1/api/assets?limit=${PAGE_LIMIT}` },
  { key: 'assets-filter', label: 'assets kind=host&enabled', path: `/api/v1/api/assets?limit=${PAGE_LIMIT}&kind=host&enabled=true` },
  { key: 'assets-search', label: 'assets search=a12', path: `/api/v1/api/assets?limit=${PAGE_LIMIT}&search=a12` },
  { key: 'findings', label: 'findings list (open)', path: `/api/v1/api/vulnerabilities?limit=${PAGE_LIMIT}` },
  { key: 'findings-filter', label: 'findings severity=high', path: `/api/v1/api/vulnerabilities?limit=${PAGE_LIMIT}&severity=high` },
  { key: 'findings-page', label: 'findings page 50', path: `/api/v1/api/vulnerabilities?limit=${PAGE_LIMIT}&page=50&status=all` },
  { key: 'statistics', label: 'findings statistics', path: '/api/v1/api/vulnerabilities/statistics' },
  { key: 'targets', label: 'targets (with counts)', path: `/api/v1/api/targets?limit=${PAGE_LIMIT}` },
];

/** The large-workspace case over GraphQL (POST), the main interface: lists with their totals. */
function largeGraphqlRequests(workspaceId: string): Array<{ key: string; label: string; query: string }> {
  const ws = JSON.stringify(workspaceId);
  const page = (field: string, args: string) =>
    `query Page { workspace(id: ${ws}) { ${field}(first: ${PAGE_LIMIT}${args}) { totalCount edges { node { id databaseId } } } } }`;
  return [
    { key: 'gql-assets', label: 'GraphQL assets', query: page('assets', '') },
    { key: 'gql-assets-filter', label: 'GraphQL assets host&enabled', query: page('assets', ', kind: host, enabled: true') },
    { key: 'gql-findings', label: 'GraphQL findings (open)', query: page('findings', ', status: open') },
    { key: 'gql-findings-filter', label: 'GraphQL findings high', query: page('findings', ', severity: [high]') },
    {
      key: 'gql-targets',
      label: 'GraphQL targets (counts)',
      query: `query Page { workspace(id: ${ws}) { targets(first: ${PAGE_LIMIT}) { totalCount edges { node { id assetCount findingCount } } } } }`,
    },
  ];
}

export function restTarget(key: string, label: string, baseUrl: string, path: string, headers: Record<string, string>): Target {
  return { key, label, url: `${baseUrl}${path}`, method: 'GET', headers, bytes: 0 };
}

export function graphqlTargets(key: string, label: string, baseUrl: string, query: string, auth: Record<string, string>): Target[] {
  return [
    {
      key: `${key}:graphql-post`,
      label: `${label} GraphQL POST`,
      url: `${baseUrl}/graphql`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
      bytes: 0,
    },
    {
      key: `${key}:graphql-get`,
      label: `${label} GraphQL GET`,
      url: `${baseUrl}/graphql?query=${encodeURIComponent(query)}`,
      method: 'GET',
      headers: auth,
      bytes: 0,
    },
  ];
}

/**
 * The large-workspace part's targets: each request against the 1,000-row and the large workspace, REST with
 * X-Workspace-Id, GraphQL over POST. Each is asked once first: an error (or GraphQL errors) stops the run.
 */
export async function largeWorkspaceTargets(
  appUrl: string,
  auth: Record<string, string>,
  smallWorkspaceId: string,
  largeWorkspaceId: string,
): Promise<Array<{ key: string; label: string; small: Target; large: Target }>> {
  const pairs: Array<{ key: string; label: string; small: Target; large: Target }> = [];
  const withWorkspace = (workspaceId: string) => ({ ...auth, 'x-workspace-id': workspaceId });
  for (const request of LARGE_REQUESTS) {
    const small = restTarget(`${request.key}:small`, `${request.label} (1,000 rows)`, appUrl, request.path, withWorkspace(smallWorkspaceId));
    const large = restTarget(`${request.key}:large`, `${request.label} (large)`, appUrl, request.path, withWorkspace(largeWorkspaceId));
    pairs.push({ key: request.key, label: request.label, small, large });
  }
  const postOf = (key: string, label: string, query: string): Target => ({ ...graphqlTargets(key, label, appUrl, query, auth)[0]!, key, label });
  const largeQueries = largeGraphqlRequests(largeWorkspaceId);
  for (const [i, request] of largeGraphqlRequests(smallWorkspaceId).entries()) {
    const small = postOf(`${request.key}:small`, `${request.label} (1,000 rows)`, request.query);
    const large = postOf(`${request.key}:large`, `${request.label} (large)`, largeQueries[i]!.query);
    pairs.push({ key: request.key, label: request.label, small, large });
  }
  for (const { small, large } of pairs) {
    for (const target of [small, large]) {
      const answer = expectOk(target.label, await fetchText(target.url, { method: target.method, headers: target.headers, body: target.body }));
      if ((answer as { errors?: unknown }).errors) throw new Error(`${target.label}: ${JSON.stringify(answer).slice(0, 500)}`);
    }
  }
  return pairs;
}
