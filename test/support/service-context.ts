import { createServiceContext } from '../../src/context.js';
import type { TestApp } from './app.js';
import type { TestUser } from './client.js';

/** A service context for a signed-in user, to call service functions directly (as a request would, by session). */
export function contextOf(server: TestApp, user: Pick<TestUser, 'id' | 'name' | 'email'>) {
  return createServiceContext(server.app.deps, {
    viewer: { id: user.id, name: user.name, email: user.email, image: null, role: 'user', via: 'session' },
    requestId: 'test',
    clientIp: '127.0.0.1',
  });
}
