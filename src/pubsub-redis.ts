import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

/** Events held while Redis is away; past this the oldest are dropped (subscribers re-read state anyway). */
const MAX_HELD_EVENTS = 10_000;
const FLUSH_BATCH = 500;
/** The longest wait between two reconnection attempts of any process's Redis clients. */
const RETRY_CEILING_MS = 2_000;
/** After an outage, held events wait this long: every other process's subscriber has retried by then. */
const RESUBSCRIBE_GRACE_MS = RETRY_CEILING_MS + 500;

type Listener = ((event: CustomEvent) => void) | { handleEvent(event: CustomEvent): void };

export interface RedisEventTarget {
  eventTarget: EventTarget;
  health(): 'up' | 'down';
  close(): Promise<void>;
}

/**
 * The event target graphql-yoga's pub/sub runs on, over Redis, written to survive Redis going away: no
 * command is ever left to fail unhandled (an unhandled MaxRetriesPerRequestError used to end the process),
 * events published while Redis is down are held (bounded) and sent once both connections are back, and
 * subscriptions are renewed by the client on reconnect. Losing Redis delays live events; nothing else.
 */
export function createRedisEventTarget(url: string, log: Logger): RedisEventTarget {
  const options: RedisOptions = {
    // Never give up reconnecting, and never fail a command for having waited: the outage is not the caller's.
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, RETRY_CEILING_MS),
  };
  // Redis needs one connection to publish and a separate one in subscriber mode. The publisher has no
  // offline queue: while it is down, events wait in `held` (bounded, flushed in order) instead.
  const publisher = new Redis(url, { ...options, enableOfflineQueue: false });
  const subscriber = new Redis(url, options);
  const listeners = new Map<string, Set<Listener>>();
  const held: { channel: string; message: string }[] = [];
  let dropped = 0;
  let flushing = false;
  let closed = false;
  let resumeAt = 0;
  let resumeTimer: NodeJS.Timeout | undefined;

  for (const [client, role] of [
    [publisher, 'publish'],
    [subscriber, 'subscribe'],
  ] as const) {
    let unreachable = false;
    client.on('error', (error: Error) => {
      if (unreachable || closed) return;
      unreachable = true;
      log.warn({ err: error, role }, 'Redis unreachable: live events are held until it is back');
    });
    client.on('ready', () => {
      if (unreachable) {
        log.info({ role }, 'Redis reachable again');
        // Other processes' subscribers come back on their own retry schedule (at most RETRY_CEILING_MS apart):
        // events held through the outage wait until they have had the time to subscribe again, or they would be
        // published to nobody.
        resumeAt = Date.now() + RESUBSCRIBE_GRACE_MS;
      }
      unreachable = false;
      void flush();
    });
  }

  subscriber.on('message', (channel: string, message: string) => {
    const callbacks = listeners.get(channel);
    if (!callbacks) return;
    let detail: unknown;
    try {
      detail = message === '' ? null : JSON.parse(message);
    } catch {
      return log.warn({ channel }, 'ignored a Redis message that is not JSON');
    }
    const event = new CustomEvent(channel, { detail });
    for (const callback of callbacks) {
      if (typeof callback === 'function') callback(event);
      else callback.handleEvent(event);
    }
  });

  function hold(channel: string, message: string): void {
    held.push({ channel, message });
    if (held.length <= MAX_HELD_EVENTS) return;
    held.shift();
    if (dropped++ === 0) log.warn({ limit: MAX_HELD_EVENTS }, 'Redis still down: dropping the oldest held live events');
  }

  /** Sends held events once both connections are ready (the subscriber's renewed subscriptions first). */
  async function flush(): Promise<void> {
    if (flushing || closed || !held.length || publisher.status !== 'ready' || subscriber.status !== 'ready') return;
    const wait = resumeAt - Date.now();
    if (wait > 0) {
      // Flushed once the grace is over (one timer, however many events arrive meanwhile).
      resumeTimer ??= setTimeout(() => {
        resumeTimer = undefined;
        void flush();
      }, wait + 10).unref();
      return;
    }
    flushing = true;
    try {
      // On reconnecting the subscriber re-sends its SUBSCRIBEs; a PING answered after them means they are in
      // place, so this process's own subscribers get the held events too.
      await subscriber.ping();
      while (held.length && publisher.status === 'ready') {
        const batch = held.splice(0, FLUSH_BATCH);
        const pipeline = publisher.pipeline();
        for (const { channel, message } of batch) pipeline.publish(channel, message);
        try {
          await pipeline.exec();
        } catch (error) {
          // Lost again mid-batch: keep the batch (a repeat is harmless, subscribers re-read state).
          held.unshift(...batch);
          throw error;
        }
      }
      if (dropped) log.warn({ dropped }, 'live events dropped while Redis was down');
      dropped = 0;
    } catch (error) {
      log.debug({ err: error }, 'held live events wait for Redis again');
    } finally {
      flushing = false;
    }
    // Events held while this flush ran.
    if (held.length && publisher.status === 'ready') void flush();
  }

  function publish(channel: string, message: string): void {
    if (closed) return;
    if (held.length || flushing || publisher.status !== 'ready') {
      hold(channel, message);
      return void flush();
    }
    publisher.publish(channel, message).catch(() => hold(channel, message));
  }

  const listenerOf = (callback: EventListenerOrEventListenerObject | null) => callback as Listener | null;

  const eventTarget: EventTarget = {
    addEventListener(topic: string, callback: EventListenerOrEventListenerObject | null) {
      const listener = listenerOf(callback);
      if (!listener) return;
      let callbacks = listeners.get(topic);
      if (!callbacks) {
        callbacks = new Set();
        listeners.set(topic, callbacks);
        // While Redis is down this waits in the client's queue; on reconnect the client renews it.
        subscriber.subscribe(topic).catch((error: unknown) => log.warn({ err: error, topic }, 'Redis subscribe failed'));
      }
      callbacks.add(listener);
    },
    removeEventListener(topic: string, callback: EventListenerOrEventListenerObject | null) {
      const listener = listenerOf(callback);
      const callbacks = listeners.get(topic);
      if (!listener || !callbacks) return;
      callbacks.delete(listener);
      if (callbacks.size) return;
      listeners.delete(topic);
      if (!closed) subscriber.unsubscribe(topic).catch((error: unknown) => log.debug({ err: error, topic }, 'Redis unsubscribe failed'));
    },
    dispatchEvent(event: Event) {
      const detail = (event as CustomEvent).detail;
      publish(event.type, detail === undefined ? '' : JSON.stringify(detail));
      return true;
    },
  };

  return {
    eventTarget,
    health: () => (publisher.status === 'ready' && subscriber.status === 'ready' ? 'up' : 'down'),
    close: async () => {
      closed = true;
      clearTimeout(resumeTimer);
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
