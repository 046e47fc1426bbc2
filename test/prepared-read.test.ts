import { afterAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import pg from 'pg';
import { Prisma } from '../src/db.js';
import { preparedReads } from '../src/db/prepared-read.js';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../src/db/unavailable.js';
import { closedPort } from './scanner/helpers.js';

/**
 * The hand-written reads (db/prepared-read.ts) run on the pool without Prisma around them: a database out of
 * reach must still be the 503 it is for Prisma's statements. Loopback only: a port nobody listens on, and a
 * server that drops every connection it accepts.
 */
const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

function readsOn(port: number) {
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'perimeter', database: 'perimeter', connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  pools.push(pool);
  return preparedReads(pool, { named: true });
}

describe('hand-written reads while the database is out of reach', () => {
  it('a refused connection is DatabaseUnavailableError (503), with the socket error as its cause', async () => {
    const read = readsOn(await closedPort());
    const error = await read(Prisma.sql`SELECT 1`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('a connection dropped by the server is DatabaseUnavailableError too', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const read = readsOn((server.address() as net.AddressInfo).port);
      await expect(read(Prisma.sql`SELECT 1`)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('counts a bare socket error only when the caller knows it came from the database; SQL errors never', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(refused, { fromDatabase: true })).toBe(true);
    // An agent's HTTP call can be refused too: without the hint it is not the database's.
    expect(isDatabaseUnavailable(refused)).toBe(false);
    const syntax = Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' });
    expect(isDatabaseUnavailable(syntax, { fromDatabase: true })).toBe(false);
  });
});
