import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Plugin } from 'graphql-yoga';
import type { DocumentNode } from 'graphql';
import type { Database } from './db.js';

/** Prometheus metrics at /metrics. One registry per app, so tests with several apps do not collide. */
export function createMetrics(db: Database) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const graphqlOperations = new Counter({
    name: 'graphql_operations_total',
    help: 'GraphQL operations by type and name',
    labelNames: ['type', 'name'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (PostgreSQL only; PGlite has one in-process connection)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      if (!db.pool) return;
      this.set({ state: 'total' }, db.pool.totalCount);
      this.set({ state: 'idle' }, db.pool.idleCount);
      this.set({ state: 'waiting' }, db.pool.waitingCount);
    },
  });

  function countOperation(document: DocumentNode) {
    for (const definition of document.definitions) {
      if (definition.kind === 'OperationDefinition') {
        graphqlOperations.inc({ type: definition.operation, name: definition.name?.value ?? 'anonymous' });
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
    /** Route labels stay low-cardinality: ids in paths become :id. */
    observe(method: string, path: string, status: number, seconds: number) {
      const route = routeLabel(path);
      requests.inc({ method, route, status: String(status) });
      latency.observe({ method, route }, seconds);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const ID_SEGMENT = /\/(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+|[A-Za-z0-9_-]{20,})(?=\/|$)/gi;

export function routeLabel(path: string): string {
  if (path.startsWith('/api/v1/docs/')) return '/api/v1/docs/*';
  if (!path.startsWith('/api/') && !['/graphql', '/health', '/ready', '/metrics'].includes(path)) return 'other';
  return path.replace(ID_SEGMENT, '/:id');
}
