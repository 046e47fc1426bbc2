import { AppError } from '../errors.js';

/** How long clients are told to wait before retrying while the database is out of reach. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database cannot be reached right now (restarting, failing over, connections cut): not the client's
 * mistake and not a bug, so 503 with Retry-After rather than a 500.
 */
export class DatabaseUnavailableError extends AppError {
  readonly retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;
  constructor() {
    super('UNAVAILABLE', `The database is unavailable right now; retry in ${DATABASE_RETRY_AFTER_SECONDS} s`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Prisma's codes for "cannot reach / lost the server", pool timeout and too many connections. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
/** Prisma driver adapter error kinds (adapter-pg maps socket errors to these). */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/** SQLSTATE: 08xxx connection exception, 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 53300 too many connections. */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** node-postgres's own messages for a connection that dropped or never came. */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly)/;
/** Socket errors count only inside a database error (an agent's HTTP call can be refused too). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

function isPrismaError(value: object): boolean {
  const name = (value as { name?: unknown }).name;
  return typeof name === 'string' && (name.startsWith('PrismaClient') || name === 'DriverAdapterError');
}

/**
 * Whether `error` (or anything in its cause chain: Prisma errors, driver adapter errors, pg errors, errors
 * wrapped by GraphQL or tRPC) says the database is out of reach. `fromDatabase`: the caller knows the error came
 * from a database connection (the hand-written reads' pool), so a bare socket error counts as Prisma's do.
 */
export function isDatabaseUnavailable(error: unknown, options: { fromDatabase?: boolean } = {}): boolean {
  const seen = new Set<object>();
  const walk = (value: unknown, insideDatabaseError: boolean, depth: number): boolean => {
    if (!value || typeof value !== 'object' || seen.has(value) || depth > 10) return false;
    seen.add(value);
    if (value instanceof DatabaseUnavailableError) return true;
    const { code, kind, message, cause, originalError, meta, errors } = value as Record<string, unknown>;
    if (typeof code === 'string' && (PRISMA_CODES.has(code) || SQLSTATE.test(code))) return true;
    if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
    if (typeof kind === 'string' && kind === 'postgres' && typeof code === 'string' && SQLSTATE.test(code)) return true;
    if (typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message)) return true;
    const inside = insideDatabaseError || isPrismaError(value);
    if (inside && typeof code === 'string' && SOCKET_CODES.has(code)) return true;
    const next = [cause, originalError, (meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError, ...(Array.isArray(errors) ? errors : [])];
    return next.some((child) => walk(child, inside, depth + 1));
  };
  return walk(error, options.fromDatabase ?? false, 0);
}

/** The 503 to answer instead of a 500 when the database is out of reach; undefined for any other failure. */
export function databaseUnavailableError(error: unknown): DatabaseUnavailableError | undefined {
  return isDatabaseUnavailable(error) ? (error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError()) : undefined;
}
