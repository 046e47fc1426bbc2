/**
 * Evidence formatting shared by the checks: short, human-readable request/response excerpts that
 * show a reviewer why a finding was raised without storing whole responses.
 */
import type { HttpResponse } from '../http-request.js';

const MAX_HEADER_CHARS = 1_500;

export function requestExcerpt(method: string, url: string): string {
  const parsed = new URL(url);
  return `${method} ${parsed.pathname}${parsed.search} HTTP/1.1\r\nHost: ${parsed.host}`;
}

/** Status line, headers (bounded) and the first `bodyChars` characters of the body. */
export function responseExcerpt(response: Pick<HttpResponse, 'httpVersion' | 'status' | 'statusText' | 'headers' | 'body'>, bodyChars = 512): string {
  const head = headerBlock(`HTTP/${response.httpVersion} ${response.status} ${response.statusText}`, response.headers);
  const body = response.body.length > bodyChars ? `${response.body.slice(0, bodyChars)}…` : response.body;
  return body ? `${head}\r\n\r\n${body}` : head;
}

export function headerBlock(statusLine: string, headers: Record<string, string>): string {
  let block = statusLine;
  for (const [name, value] of Object.entries(headers)) {
    const line = `\r\n${name}: ${value.replace(/\n/g, ' ')}`;
    if (block.length + line.length > MAX_HEADER_CHARS) return `${block}\r\n…`;
    block += line;
  }
  return block;
}
