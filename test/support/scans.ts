import type { clientFor, TestUser } from './client.js';
import { expect } from 'vitest';
import { waitFor } from './wait.js';

/** Helpers for the scan suites: REST calls through the front door, and bounded waits on a scan's status. */

export type Client = ReturnType<typeof clientFor>;

export const TERMINAL_STATUSES = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** Pothos' default relay id: base64 of "<Type>:<id>" (tests cross-check it against databaseId). */
export function globalId(type: string, id: string): string {
  return Buffer.from(`${type}:${id}`).toString('base64');
}

export const SCAN_UPDATED = `subscription($id: ID!) {
  scanUpdated(id: $id) { id databaseId status stepsDone stepsTotal progress error steps { name status attempts } }
}`;

export const WORKSPACE_EVENTS = 'subscription($workspaceId: ID!) { workspaceEvents(workspaceId: $workspaceId) { type workspaceId entityId at } }';

export async function addTarget(client: Client, user: TestUser, workspaceId: string, value: string): Promise<{ id: string; value: string; type: string }> {
  const response = await client.api('POST', '/api/v1/api/targets', { as: user, workspaceId, body: { value } });
  if (response.status !== 201) throw new Error(`add target failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Registers a workspace template and uploads its content (REST); expects it to load with no warning. */
export async function uploadTemplate(client: Client, user: TestUser, workspaceId: string, fileName: string, content: string): Promise<{ id: string }> {
  const created = await client.api('POST', '/api/v1/api/templates', { as: user, workspaceId, body: { fileName } });
  expect(created.status).toBe(201);
  const uploaded = await client.api('POST', '/api/v1/api/templates/upload', {
    as: user,
    workspaceId,
    body: { templateId: created.body.id, fileContent: content },
  });
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
  expect(uploaded.body.warnings).toEqual([]);
  return uploaded.body.template as { id: string };
}

/** POST /api/scans; expects 201 with a Location naming the scan. */
export async function startScan(client: Client, user: TestUser, workspaceId: string, targetId: string, options?: Record<string, unknown>) {
  const response = await client.api('POST', '/api/v1/api/scans', { as: user, workspaceId, body: { targetId, ...(options ? { options } : {}) } });
  if (response.status !== 201) throw new Error(`start scan failed: ${response.status} ${JSON.stringify(response.body)}`);
  if (response.headers.get('location') !== `/api/v1/api/scans/${response.body.id}`) throw new Error(`unexpected Location ${response.headers.get('location')}`);
  return response.body;
}

export async function getScan(client: Client, user: TestUser, workspaceId: string, id: string) {
  const response = await client.api('GET', `/api/v1/api/scans/${id}`, { as: user, workspaceId });
  if (response.status !== 200) throw new Error(`get scan failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Polls GET /api/scans/{id} until `until` holds (default: a terminal status); returns that scan. */
export async function waitForScan(
  client: Client,
  user: TestUser,
  workspaceId: string,
  id: string,
  options: { until?: (scan: any) => boolean; timeoutMs?: number; what?: string } = {},
) {
  const until = options.until ?? ((scan: any) => TERMINAL_STATUSES.includes(scan.status));
  let last: any;
  try {
    return await waitFor(
      async () => {
        last = await getScan(client, user, workspaceId, id);
        return until(last) ? last : undefined;
      },
      { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 100, what: options.what ?? `scan ${id} to finish` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}

export function stepOf(scan: { steps: { name: string }[] }, name: string): any {
  const step = scan.steps.find((s) => s.name === name);
  if (!step) throw new Error(`scan has no ${name} step`);
  return step;
}
