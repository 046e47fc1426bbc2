import type { IncomingMessage, ServerResponse } from 'node:http';

const DECIMAL = /^\d+$/;

/**
 * A GraphQL POST's JSON body, read here and handed to yoga already parsed, as `req.body`, which its node adapter
 * takes as it is. Otherwise yoga pipes every body through a web TransformStream to count its bytes (its body
 * limit) and builds a second Request around it: measured at about 0.3 ms of CPU per request, more than a whole
 * GET request of `{ __typename }` costs (`npm run bench:api`, part `floor`).
 *
 * Only a JSON body whose length is declared and within `limit` (BODY_LIMIT_BYTES) is read here: the common case.
 * Anything else (chunked, larger, such as importTemplates carrying an archive, a malformed Content-Length,
 * another media type) goes to yoga untouched, which reads it and applies its own limit as it always has; a body
 * that is not a non-empty JSON object (invalid JSON, an array, `{}`) is passed on as its bytes, for yoga to judge.
 *
 * Returns false when the client went away while sending it: the response is then closed and there is nothing to do.
 */
export async function preReadGraphQLBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<boolean> {
  if (req.method !== 'POST') return true;
  const mediaType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  const declared = req.headers['content-length'];
  if (mediaType !== 'application/json' || !declared || !DECIMAL.test(declared)) return true;
  const length = Number(declared);
  if (length === 0 || length > limit) return true;
  const raw = await readBody(req);
  if (!raw) {
    res.destroy();
    return false;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const usable = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && Object.keys(parsed).length > 0;
  (req as IncomingMessage & { body?: unknown }).body = usable ? parsed : raw;
  return true;
}

/**
 * The body's bytes, or undefined when the client went away while sending it. Listens for the stream's events
 * rather than iterating it: `for await` over a request builds an async iterator and a promise per chunk, a
 * measurable share of a small POST's CPU (`npm run bench:api`, GraphQL POST against GET).
 */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const settle = (body: Buffer | undefined) => {
      req.off('data', onData).off('end', onEnd).off('error', onFailure).off('close', onClose);
      resolve(body);
    };
    const received = () => (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => settle(received());
    const onFailure = () => settle(undefined);
    // Closed before the end: the client went away (an aborted request may close without an error).
    const onClose = () => settle(req.complete ? received() : undefined);
    req.on('data', onData).on('end', onEnd).on('error', onFailure).on('close', onClose);
  });
}
