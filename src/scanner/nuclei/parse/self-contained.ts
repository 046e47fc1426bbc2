/**
 * nuclei `self-contained`: requests that carry their own URL (`https://api.example.com/x?k={{token}}`, or a raw
 * request whose request line is a full URL or whose `Host:` header names the host) and need no target. At the
 * top level it marks every http block (nuclei's parseSelfContainedRequests) and the template runs once per scan,
 * not once per input (nuclei's executeAllSelfContained); see engine/self-contained.ts and run-self-contained.ts.
 *
 * Such a request has no target variables: nuclei leaves `{{BaseURL}}`, `{{Hostname}}`... unresolved in a path
 * (the request is then not sent), and in a raw request derives them from the request line's URL, which itself
 * cannot use them. Those uses get a warning here; the request is not sent at run time.
 */
import type { HttpRequestBlock } from '../types.js';
import type { Ctx } from './context.js';
import { markerVariables } from './dsl.js';
import { TARGET_VARIABLES } from './template.js';

/** The first line of a raw request that is not an annotation (`@Host: ...`): `GET https://h/x HTTP/1.1`. */
export function rawRequestLine(raw: string): string {
  return raw.split('\n').find((line) => line.trim() !== '' && !line.trim().startsWith('@')) ?? '';
}

function targetVariablesIn(texts: string[]): string[] {
  const used = new Set<string>();
  for (const text of texts) for (const name of markerVariables(text)) if (TARGET_VARIABLES.includes(name)) used.add(name);
  return [...used];
}

export function checkSelfContained(ctx: Ctx, blocks: HttpRequestBlock[], protocolKey: string, templateLevel: boolean, otherProtocols: readonly string[]): void {
  if (templateLevel) for (const block of blocks) block.selfContained = true;
  if (templateLevel && otherProtocols.length) {
    ctx.warn(`a self-contained template runs its http requests once per scan; its ${otherProtocols.join('/')} requests are not run`, ['self-contained'], true);
  }
  for (const block of blocks) {
    if (!block.selfContained || block.skip) continue;
    // raw: only the request line must stand alone; its URL gives the headers and body their target variables
    const texts = block.raw.length ? block.raw.map(rawRequestLine) : [...block.paths, ...Object.values(block.headers), block.body ?? ''];
    const used = targetVariablesIn(texts);
    if (!used.length) continue;
    const names = used.map((name) => `{{${name}}}`).join(', ');
    ctx.warn(
      `a self-contained request has no target: ${names} stay${used.length > 1 ? '' : 's'} unresolved and the request is not sent (give it a full URL${block.raw.length ? ' or a Host header' : ''})`,
      [protocolKey, block.index],
    );
  }
}
