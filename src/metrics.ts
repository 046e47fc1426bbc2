import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Plugin } from 'graphql-yoga';
import type { DocumentNode } from 'graphql';
import type { AppDeps } from './context.js';
import { createRouteMatcher } from './ops/route-templates.js';
import { scanStepDuration } from './ops/scan-step-metrics.js';
import { countScansByStatus } from './modules/scans/service.js';
import { countFindingsByStatus, countFindingTransitions } from './modules/vulnerabilities/service.js';

/** Distinct GraphQL operation names counted by name; later ones share the label `other` (names are the client's choice). */
const MAX_OPERATION_NAMES = 100;
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

/**
 * Prometheus metrics at /metrics. One registry per app, so tests with several apps do not collide.
 * Every label comes from a bounded set (route templates, methods, statuses, step names), so no request,
 * however anonymous, can add series: a path no route serves is counted under `unmatched`.
 */
export function createMetrics(deps: Pick<AppDeps, 'db' | 'prisma' | 'queue' | 'log'>) {
  const { db } = deps;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const routeOf = createRouteMatcher();

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const graphqlOperations = new Counter({
    name: 'graphql_operations_total',
    help: `GraphQL operations by type and name (the first ${MAX_OPERATION_NAMES} distinct names; later ones as "other")`,
    labelNames: ['type', 'name'] as const,
    registers: [registry],
  });
  const operationNames = new Set<string>();
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (the embedded database has one, to its thread)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, db.pool.totalCount);
      this.set({ state: 'idle' }, db.pool.idleCount);
      this.set({ state: 'waiting' }, db.pool.waitingCount);
    },
  });

  // Counted at scrape time from the database, so every API instance and worker process is included.
  // A failed count leaves the last values (the scrape itself still answers).
  function collecting<M>(what: string, collect: (this: M) => Promise<void>) {
    return async function (this: M) {
      try {
        await collect.call(this);
      } catch (error) {
        deps.log.warn({ err: error, metric: what }, 'metric collection failed');
      }
    };
  }
  new Gauge({
    name: 'perimeter_scans',
    help: 'Scans by status (all workspaces)',
    labelNames: ['status'] as const,
    registers: [registry],
    collect: collecting('perimeter_scans', async function (this: Gauge<'status'>) {
      for (const [status, count] of Object.entries(await countScansByStatus(deps))) this.set({ status }, count);
    }),
  });
  new Gauge({
    name: 'perimeter_findings',
    help: 'Findings by status (all workspaces)',
    labelNames: ['status'] as const,
    registers: [registry],
    collect: collecting('perimeter_findings', async function (this: Gauge<'status'>) {
      for (const [status, count] of Object.entries(await countFindingsByStatus(deps))) this.set({ status }, count);
    }),
  });
  new Counter({
    name: 'perimeter_finding_transitions_total',
    help: 'Findings opened, fixed, reopened and dismissed since the instance began (from the findings history)',
    labelNames: ['type'] as const,
    registers: [registry],
    // A counter kept in the database: each scrape reads the running totals.
    collect: collecting('perimeter_finding_transitions_total', async function (this: Counter<'type'>) {
      const counts = await countFindingTransitions(deps);
      this.reset();
      for (const [type, count] of Object.entries(counts)) this.inc({ type }, count);
    }),
  });
  new Gauge({
    name: 'perimeter_queue_jobs',
    help: 'Jobs in the queue by queue and state (waiting: created or waiting to retry; active: running)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    collect: collecting('perimeter_queue_jobs', async function (this: Gauge<'queue' | 'state'>) {
      for (const { queue, waiting, active } of await deps.queue.depths()) {
        this.set({ queue, state: 'waiting' }, waiting);
        this.set({ queue, state: 'active' }, active);
      }
    }),
  });
  registry.registerMetric(scanStepDuration);

  function operationName(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (operationNames.has(name)) return name;
    if (operationNames.size >= MAX_OPERATION_NAMES || !OPERATION_NAME.test(name)) return 'other';
    operationNames.add(name);
    return name;
  }

  function countOperation(document: DocumentNode) {
    for (const definition of document.definitions) {
      if (definition.kind === 'OperationDefinition') {
        graphqlOperations.inc({ type: definition.operation, name: operationName(definition.name?.value) });
        return;
      }
    }
  }

  const graphqlPlugin: Plugin = {
    onExecute({ args }) {
      countOperation(args.document);
    },
    onSubscribe({ args }) {
      countOperation(args.document);
    },
  };

  return {
    registry,
    graphqlPlugin,
    /** Counts a finished request under its route template (`unmatched` for a path no route serves). */
    observe(method: string, path: string, status: number, seconds: number) {
      const route = routeOf(path);
      requests.inc({ method, route, status: String(status) });
      latency.observe({ method, route }, seconds);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
