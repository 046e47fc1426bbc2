/**
 * `race: true` with `race_count: N` (nuclei's executeRaceRequest): N copies of the block's first request, all
 * started at once; each answer is an event of its own. N is capped so a template cannot turn the scanner into
 * a flood; the per-host rate limiter of the scan still applies to every copy.
 */
import type { HttpSendRequest, HttpSendResponse } from '../types.js';

export const MAX_RACE_COUNT = 25;

export function raceCopies(requested: number, warn: (message: string) => void): number {
  if (requested <= MAX_RACE_COUNT) return Math.max(1, requested);
  warn(`race_count ${requested} capped at ${MAX_RACE_COUNT} requests`);
  return MAX_RACE_COUNT;
}

/** Sends `count` copies of a request together; failed copies are reported and left out, answers keep their order. */
export async function sendTogether(
  send: (request: HttpSendRequest) => Promise<HttpSendResponse>,
  request: HttpSendRequest,
  count: number,
  onError: (err: Error) => void,
): Promise<HttpSendResponse[]> {
  const settled = await Promise.allSettled(Array.from({ length: count }, () => send({ ...request })));
  const out: HttpSendResponse[] = [];
  for (const result of settled) {
    if (result.status === 'fulfilled') out.push(result.value);
    else onError(result.reason as Error);
  }
  return out;
}
