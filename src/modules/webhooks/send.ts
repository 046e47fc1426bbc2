import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { ScopeGuard } from '../../scanner/scope.js';
import type { ChangePayload } from '../changes/record.js';
import type { WebhookFormat } from './schemas.js';

/** What one attempt did: a status code (any, 3xx included: redirects are never followed) or an error. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** The event as a delivery carries it: the change feed's payload plus its workspace. */
export type WebhookEventData = ChangePayload & { workspaceId: string };

/** The body of a delivery: Standard Webhooks' `{type, timestamp, data}`, or Slack's `{text}`. */
export function deliveryBody(format: WebhookFormat, event: WebhookEventData): string {
  if (format === 'slack') return JSON.stringify({ text: summaryOf(event) });
  return JSON.stringify({ type: event.type, timestamp: event.at, data: event });
}

/** One line a person reads in a chat channel. */
export function summaryOf(event: WebhookEventData): string {
  const data = (event.data ?? {}) as Record<string, unknown>;
  const what = (() => {
    if (event.type.startsWith('asset.')) return `${data.kind ?? 'asset'} ${data.value ?? event.assetId ?? ''}`.trim();
    if (event.type.startsWith('finding.')) return `${data.name ?? 'finding'} (${data.severity ?? 'unknown'})`;
    if (event.type === 'scan.failed') return `scan ${event.scanId ?? ''}: ${data.error ?? 'failed'}`;
    if (event.type === 'scan.completed') return `scan ${event.scanId ?? ''}: ${data.assetsFound ?? 0} assets`;
    return event.id;
  })();
  return `[Perimeter] ${event.type}: ${what}`;
}

/** The three Standard Webhooks headers; the timestamp is the attempt's, the id the delivery's (stable across retries). */
export function signedHeaders(secret: string, webhookId: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(webhookId, at, body),
  };
}

/**
 * One POST. Dials only addresses the scope guard allows (an IP literal is checked now, a name when the socket
 * connects, against what DNS answered then). A redirect is an answer like any other: not followed, not 2xx.
 * The response body is drained unread; only its status matters.
 */
export function postOnce(options: {
  url: string;
  body: string;
  headers: Record<string, string>;
  guard: ScopeGuard;
  timeoutMs: number;
}): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<AttemptOutcome>((resolve) => {
    let url: URL;
    let connect: ReturnType<ScopeGuard['connectOptions']>;
    try {
      url = new URL(options.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`refusing ${url.protocol} URLs`);
      connect = options.guard.connectOptions(url.hostname.replace(/^\[|\]$/g, ''));
    } catch (error) {
      return resolve({ ok: false, statusCode: null, error: (error as Error).message, durationMs: elapsed() });
    }
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(
      {
        ...connect,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: false,
        headers: {
          ...options.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(options.body)),
          'user-agent': 'Perimeter-Webhooks/1',
          host: url.host,
        },
        ...(url.protocol === 'https:' ? { servername: connect.lookup ? url.hostname : undefined } : {}),
      },
      (response) => {
        const statusCode = response.statusCode ?? 0;
        response.resume();
        request.destroy();
        const ok = statusCode >= 200 && statusCode < 300;
        const error = ok ? null : statusCode >= 300 && statusCode < 400 ? `redirect (${statusCode}) not followed` : `HTTP ${statusCode}`;
        resolve({ ok, statusCode, error, durationMs: elapsed() });
      },
    );
    // A bound on the whole attempt (a slow trickle of headers included), not only on idle time.
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error) => resolve({ ok: false, statusCode: null, error: error.message.slice(0, 500), durationMs: elapsed() }));
    request.end(options.body);
  });
}
