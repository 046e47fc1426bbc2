import { print, type DocumentNode } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { TestApp } from './app.js';

export interface TestUser {
  id: string;
  name: string;
  email: string;
  token: string;
}

export interface CallOptions {
  as?: TestUser | { token: string };
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  workspaceId?: string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

let counter = 0;

/** Front-door clients: REST over real HTTP, GraphQL over real HTTP, and factories that go through them. */
export function clientFor(server: TestApp) {
  async function api<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.as) headers.authorization = `Bearer ${options.as.token}`;
    if (options.workspaceId) headers['x-workspace-id'] = options.workspaceId;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${server.url}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  async function gql<TResult = any, TVariables = Record<string, unknown>>(
    document: TypedDocumentNode<TResult, TVariables> | DocumentNode | string,
    options: { as?: CallOptions['as']; variables?: TVariables; method?: 'GET' | 'POST' } = {},
  ): Promise<{ status: number; data?: TResult; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
    const query = typeof document === 'string' ? document : print(document);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' };
    if (options.as) headers.authorization = `Bearer ${options.as.token}`;
    let response: Response;
    if (options.method === 'GET') {
      const params = new URLSearchParams({ query });
      if (options.variables) params.set('variables', JSON.stringify(options.variables));
      response = await fetch(`${server.url}/graphql?${params}`, { headers: { ...headers, 'content-type': '' } });
    } else {
      response = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables: options.variables }) });
    }
    const json = (await response.json()) as { data?: TResult; errors?: { message: string; extensions?: Record<string, unknown> }[] };
    return { status: response.status, ...json };
  }

  async function signUp(name?: string): Promise<TestUser> {
    counter += 1;
    const label = name ?? `user${counter}`;
    const email = `${label.toLowerCase().replace(/[^a-z0-9]/g, '')}.${counter}.${Date.now()}@example.test`;
    const response = await api('POST', '/api/v1/api/auth/sign-up/email', { body: { name: label, email, password: 'correct horse battery' } });
    if (response.status !== 200) throw new Error(`sign-up failed: ${response.status} ${JSON.stringify(response.body)}`);
    return { ...response.body.user, token: response.body.token };
  }

  async function createWorkspace(owner: TestUser, fields: Record<string, unknown> = {}) {
    counter += 1;
    const response = await api('POST', '/api/v1/api/workspaces', { as: owner, body: { name: `Workspace ${counter}`, ...fields } });
    if (response.status !== 201) throw new Error(`create workspace failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as { id: string; name: string; [key: string]: unknown };
  }

  async function addMember(owner: TestUser, workspaceId: string, user: TestUser, role: 'owner' | 'member' = 'member') {
    const response = await api('POST', `/api/v1/api/workspaces/${workspaceId}/members`, { as: owner, body: { email: user.email, role } });
    if (response.status !== 201) throw new Error(`add member failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as { id: string; role: string };
  }

  return { api, gql, signUp, createWorkspace, addMember };
}
