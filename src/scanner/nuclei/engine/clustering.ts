import type { HttpSendRequest, HttpSendResponse } from '../types.js';

export interface CacheEntry {
  owner: string;
  promise: Promise<HttpSendResponse>;
}

export function clusterKey(req: HttpSendRequest): string {
  const headers = Object.entries(req.headers)
    .map(([k, v]) => [k.toLowerCase(), v])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify([
    req.method,
    req.url,
    headers,
    req.body ?? null,
    req.followRedirects,
    req.maxRedirects,
    req.sameHostRedirectsOnly ?? false,
    req.maxBodyBytes ?? null,
    req.sni ?? null,
    req.unsafeRaw ?? null,
  ]);
}
