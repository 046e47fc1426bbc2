/**
 * Shared fixtures of the engine tests (engine.*.test.ts): two loopback servers (the target and another origin),
 * one sender, and helpers to parse and run templates against the target.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { createNodeHttpSender, parseTemplate, runTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import type { NucleiTemplate, RunDeps } from '../../src/scanner/nuclei/index.js';
import { setOtherOrigin, startServer, type TestServer } from './server.js';

export let server: TestServer;
export let other: TestServer;
const sender = createNodeHttpSender({ maxBodyBytes: 1024 * 1024 });

/** Starts the servers before the calling test file's tests and stops them after. */
export function useEngineServers() {
  beforeAll(async () => {
    server = await startServer();
    other = await startServer();
    setOtherOrigin(other.baseUrl);
  });

  afterAll(async () => {
    sender.destroy();
    await server.close();
    await other.close();
  });
}

export function load(yaml: string): NucleiTemplate {
  const parsed = parseTemplate(yaml);
  expect(parsed.errors).toEqual([]);
  expect(parsed.template).toBeDefined();
  return parsed.template!;
}

export async function run(yaml: string | string[], deps: Partial<RunDeps> = {}, baseUrl?: string) {
  const templates = (Array.isArray(yaml) ? yaml : [yaml]).map(load);
  return runTemplatesDetailed(templates, { baseUrl: baseUrl ?? server.baseUrl }, { send: sender, timeoutMs: 5000, ...deps });
}

export function header(id: string, severity = 'info') {
  return `id: ${id}
info:
  name: ${id} test
  author: perimeter
  severity: ${severity}
`;
}
