/**
 * The responses nuclei's operators see for one request (pkg/protocols/http/request.go, respChain): the final
 * response first, then each redirect response back to the first one (`respChain.Previous()`), every one an
 * event of its own. Redirect responses carry status and headers only: Go's client never read their bodies.
 */
import type { HttpSendResponse } from '../types.js';

export function chainResponses(resp: HttpSendResponse): HttpSendResponse[] {
  const earlier = resp.redirectChain ?? [];
  if (!earlier.length) return [resp];
  return [resp, ...[...earlier].reverse()];
}

/** Every response of the chain in the order it arrived (cookies set along the way, as Go's cookie jar keeps them). */
export function arrivalOrder(resp: HttpSendResponse): HttpSendResponse[] {
  return [...(resp.redirectChain ?? []), resp];
}
