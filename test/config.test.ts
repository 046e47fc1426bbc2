import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../src/env.js';
import { programStderr, spawnServer } from './support/process.js';

function configError(source: Record<string, string>): ConfigError {
  try {
    loadEnv(source);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadEnv accepted ${JSON.stringify(source)}`);
}

describe('loadEnv()', () => {
  it('accepts an empty environment with defaults', () => {
    const env = loadEnv({});
    expect(env).toMatchObject({ PORT: 3000, HOST: '0.0.0.0', LOG_LEVEL: 'info', NODE_ENV: 'development', SHUTDOWN_TIMEOUT_MS: 10_000 });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.dataDir).toMatch(/^\//);
  });

  it('accepts valid values and coerces numbers', () => {
    const env = loadEnv({
      PORT: '8080',
      DATABASE_URL: 'postgresql://user@db:5432/perimeter',
      REDIS_URL: 'rediss://cache:6380',
      AUTH_SECRET: 'a'.repeat(32),
      LOG_LEVEL: 'debug',
    });
    expect(env).toMatchObject({ PORT: 8080, DATABASE_URL: 'postgresql://user@db:5432/perimeter', REDIS_URL: 'rediss://cache:6380', LOG_LEVEL: 'debug' });
  });

  it.each([
    ['PORT', 'abc', /^ {2}PORT: must be a whole number from 0 to 65535$/],
    ['PORT', '70000', /^ {2}PORT: must be a whole number from 0 to 65535$/],
    ['PORT', '-1', /^ {2}PORT: must be a whole number from 0 to 65535$/],
    ['PORT', '80.5', /^ {2}PORT: must be a whole number from 0 to 65535$/],
    ['DATABASE_URL', 'mysql://x', /postgres:\/\/ or postgresql:\/\//],
    ['REDIS_URL', 'http://x', /redis:\/\/ or rediss:\/\//],
    ['AUTH_SECRET', 'too-short-secret', /at least 32 characters/],
    ['LOG_LEVEL', 'loud', /info/],
    ['SHUTDOWN_TIMEOUT_MS', 'soon', /must be a whole number, at least 100/],
    ['SHUTDOWN_TIMEOUT_MS', '5', /must be a whole number, at least 100/],
    ['GRAPHQL_MAX_DEPTH', '1000', /must be a whole number from 2 to 100/],
    ['GRAPHQL_COMPILE_AFTER', 'never', /must be a whole number from 0 to 1000000, or off/],
    ['GRAPHQL_COMPILE_AFTER', '-1', /must be a whole number from 0 to 1000000, or off/],
    ['OAST_DOMAIN', 'not a domain', /must be a domain name such as oast.example.com/],
    ['OAST_DOMAIN', 'http://oast.example.com', /must be a domain name/],
    ['OAST_PUBLIC_IP', '2001:db8::1', /must be an IPv4 address/],
    ['OAST_DNS_PORT', '65536', /must be a whole number from 0 to 65535/],
  ])('rejects %s=%s with a message naming the variable', (name, value, why) => {
    const error = configError({ [name]: value });
    expect(error.message).toMatch(/^Invalid configuration:/);
    const line = error.message.split('\n').find((l) => l.trim().startsWith(`${name}:`));
    expect(line, error.message).toBeDefined();
    expect(line).toMatch(why);
  });

  it('names every bad variable at once, without echoing a secret', () => {
    const secret = 'short-secret-value';
    const error = configError({ PORT: 'abc', DATABASE_URL: 'mysql://x', REDIS_URL: 'http://x', AUTH_SECRET: secret, LOG_LEVEL: 'loud' });
    const named = error.message
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(':')[0]);
    expect(named.sort()).toEqual(['AUTH_SECRET', 'DATABASE_URL', 'LOG_LEVEL', 'PORT', 'REDIS_URL']);
    expect(error.message).not.toContain(secret);
  });

  it('compiles GraphQL documents from their second execution unless told otherwise', () => {
    expect(loadEnv({}).GRAPHQL_COMPILE_AFTER).toBe(1);
    expect(loadEnv({ GRAPHQL_COMPILE_AFTER: '0' }).GRAPHQL_COMPILE_AFTER).toBe(0);
    expect(loadEnv({ GRAPHQL_COMPILE_AFTER: 'off' }).GRAPHQL_COMPILE_AFTER).toBe('off');
  });

  it('leaves OAST off by default and normalises OAST_DOMAIN', () => {
    const env = loadEnv({});
    expect(env.OAST_DOMAIN).toBeUndefined();
    expect(env).toMatchObject({ OAST_LISTEN_HOST: '127.0.0.1', OAST_HTTP_PORT: 8180, OAST_DNS_PORT: 8053, OAST_COOLDOWN_MS: 5_000 });
    expect(loadEnv({ OAST_DOMAIN: 'OAST.Example.com.', OAST_PUBLIC_IP: '203.0.113.9' })).toMatchObject({
      OAST_DOMAIN: 'oast.example.com',
      OAST_PUBLIC_IP: '203.0.113.9',
    });
  });

  it('treats empty values as unset', () => {
    const env = loadEnv({ PORT: '', DATABASE_URL: '' });
    expect(env.PORT).toBe(3000);
    expect(env.DATABASE_URL).toBeUndefined();
  });
});

describe('the server process with a bad configuration', () => {
  it('exits 1 and prints the message naming the variable on stderr', async () => {
    const started = Date.now();
    const server = spawnServer({ PORT: 'abc', LOG_LEVEL: 'info' });
    const { code } = await server.exited;
    expect(code).toBe(1);
    const stderr = programStderr(server.stderr());
    expect(stderr).toContain('Invalid configuration:');
    expect(stderr).toMatch(/^ {2}PORT: must be a whole number from 0 to 65535$/m);
    // It stopped before starting anything: no log lines, no stack trace.
    expect(server.stdout()).toBe('');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
