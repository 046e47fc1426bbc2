import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';

let server: TestApp;
let user: TestUser;
const opened: WebSocket[] = [];

beforeAll(async () => {
  server = await startTestApp({ WS_CONNECTION_INIT_TIMEOUT_MS: '1000', WS_MAX_CONNECTIONS_PER_CLIENT: '2' });
  user = await clientFor(server).signUp('Socket user');
});
afterAll(async () => {
  for (const socket of opened) socket.terminate();
  await server?.stop();
});

/** A raw graphql-transport-ws socket, recording its messages and its close; `token`: sent in connection_init on open. */
function rawSocket(token?: string) {
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  opened.push(socket);
  if (token) socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
  const state = { socket, messages: [] as { type: string }[], closed: undefined as { code: number; reason: string } | undefined };
  socket.on('message', (data) => state.messages.push(JSON.parse(String(data))));
  socket.on('close', (code, reason) => {
    state.closed = { code, reason: String(reason) };
  });
  return state;
}

async function openSocket(token?: string) {
  const state = rawSocket(token);
  await new Promise<void>((resolve, reject) => {
    state.socket.once('open', () => resolve());
    state.socket.once('error', reject);
  });
  return state;
}

async function acknowledged(state: Awaited<ReturnType<typeof openSocket>>) {
  await waitFor(() => state.messages.some((message) => message.type === 'connection_ack') || state.closed, { what: 'connection_ack' });
  expect(state.closed).toBeUndefined();
}

describe('websockets must authenticate, and one client holds a bounded number', () => {
  it('closes a socket that sends no connection_init within WS_CONNECTION_INIT_TIMEOUT_MS (4408)', async () => {
    const state = await openSocket();
    await waitFor(() => state.closed, { what: 'the idle socket to close' });
    expect(state.closed).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
  });

  it('closes a socket whose connection_init carries no valid credentials (4403)', async () => {
    for (const payload of [undefined, { authorization: 'Bearer forged' }]) {
      const state = await openSocket();
      state.socket.send(JSON.stringify({ type: 'connection_init', ...(payload ? { payload } : {}) }));
      await waitFor(() => state.closed, { what: 'the socket to close' });
      expect(state.closed, JSON.stringify(payload)).toEqual({ code: 4403, reason: 'Forbidden' });
      expect(state.messages).toEqual([]);
    }
  });

  it('keeps an authenticated socket open past the init timeout', async () => {
    const state = await openSocket(user.token);
    await acknowledged(state);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(state.closed).toBeUndefined();
    state.socket.close();
    await waitFor(() => state.closed, { what: 'our close' });
  });

  it('closes sockets beyond WS_MAX_CONNECTIONS_PER_CLIENT (4429); a freed slot can be used again', async () => {
    const first = await openSocket(user.token);
    const second = await openSocket(user.token);
    await acknowledged(first);
    await acknowledged(second);
    const third = rawSocket(user.token);
    await waitFor(() => third.closed, { what: 'the third socket to close' });
    expect(third.closed).toEqual({ code: 4429, reason: 'Too many connections from this client' });

    first.socket.close();
    await waitFor(() => first.closed, { what: 'the first socket to close' });
    // The server counts the close when it sees it: retry briefly until the slot is free.
    const again = await waitFor(
      async () => {
        const candidate = await openSocket(user.token);
        await waitFor(() => candidate.messages.length > 0 || candidate.closed, { what: 'ack or close' });
        return candidate.closed ? undefined : candidate;
      },
      { what: 'a socket in the freed slot' },
    );
    expect(again.messages[0]).toEqual({ type: 'connection_ack' });
    second.socket.close();
    again.socket.close();
  });
});
