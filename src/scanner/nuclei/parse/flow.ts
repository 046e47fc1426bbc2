/**
 * A template's `flow:` (engine/flow.ts runs it): checked here without running it. Protocol calls the engine can
 * run in a flow (http, dns, ssl) are kept; a flow calling another protocol (javascript(), network()...) makes the
 * whole template skipped, since its outcome would depend on what we cannot run. Calls naming a block that does
 * not exist are warned about (they return false at run time). Names the flow `set()`s are returned so that the
 * blocks using them are not warned about unknown variables.
 */
import { type Ctx, isRecord, typeName } from './context.js';

/** Protocol functions a flow can call; the ones outside FLOW_RUNNABLE make the template skipped. */
export const FLOW_PROTOCOLS = ['http', 'dns', 'ssl', 'network', 'tcp', 'javascript', 'code', 'headless', 'file', 'websocket', 'whois'] as const;
export const FLOW_RUNNABLE: ReadonlySet<string> = new Set(['http', 'dns', 'ssl']);

const MAX_FLOW_CHARS = 64 * 1024;

export interface ParsedFlow {
  flow?: string;
  skip?: string;
  /** Variable names given to `set("name", ...)` with a literal name. */
  setNames: string[];
}

/** Strips comments and string literals' contents enough to find calls in code (not inside strings). */
function codeOnly(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, (m) => `${m[0]}${'_'.repeat(Math.max(0, m.length - 2))}${m[0]}`);
}

function blockKeys(root: Record<string, unknown>, protocol: string): { count: number; ids: Set<string> } | undefined {
  const raw = protocol === 'http' ? (root.http ?? root.requests) : root[protocol];
  if (!Array.isArray(raw)) return undefined;
  const ids = new Set<string>();
  for (const b of raw) if (isRecord(b) && (typeof b.id === 'string' || typeof b.id === 'number')) ids.add(String(b.id));
  return { count: raw.length, ids };
}

export function parseFlow(ctx: Ctx, root: Record<string, unknown>): ParsedFlow {
  const raw = root.flow;
  if (raw === undefined || raw === null || raw === '') return { setNames: [] };
  if (typeof raw !== 'string') {
    const skip = `'flow' must be JavaScript text, got ${typeName(raw)}`;
    ctx.warn(`${skip}; the template will not run`, ['flow'], true);
    return { skip, setNames: [] };
  }
  if (raw.length > MAX_FLOW_CHARS) {
    const skip = `flow is longer than ${MAX_FLOW_CHARS} characters`;
    ctx.warn(`${skip}; the template will not run`, ['flow'], true);
    return { skip, setNames: [] };
  }
  const code = codeOnly(raw);
  const calls = new Map<string, string[]>();
  const callRe = new RegExp(`(^|[^.\\w$])(${FLOW_PROTOCOLS.join('|')})\\s*\\(([^()]*)\\)?`, 'g');
  for (const m of code.matchAll(callRe)) {
    const start = (m.index ?? 0) + m[1].length + m[2].length;
    // arguments as written (literals keep their text in `raw`; `code` blanked them)
    const open = raw.indexOf('(', start);
    const close = m[3] !== undefined ? open + 1 + m[3].length : -1;
    const args = close > open ? raw.slice(open + 1, close) : '';
    calls.set(m[2], [...(calls.get(m[2]) ?? []), args]);
  }
  const refused = [...calls.keys()].filter((p) => !FLOW_RUNNABLE.has(p));
  if (refused.length) {
    const skip = `flow calls ${refused.map((p) => `${p}()`).join(', ')}, which the engine cannot run`;
    ctx.warn(`${skip}; the template will not run`, ['flow'], true);
    return { skip, setNames: [] };
  }
  for (const [protocol, argLists] of calls) {
    const keys = blockKeys(root, protocol);
    if (!keys) {
      ctx.warn(`flow calls ${protocol}() but the template has no ${protocol} blocks; that call returns false`, ['flow'], true);
      continue;
    }
    for (const args of argLists) {
      for (const arg of args.split(',').map((a) => a.trim())) {
        const literal = /^(\d+)$/.exec(arg)?.[1] ?? /^["'](.*)["']$/.exec(arg)?.[1];
        if (literal === undefined || arg === '') continue;
        const index = /^\d+$/.test(literal) ? Number(literal) : 0;
        if (keys.ids.has(literal) || (index >= 1 && index <= keys.count)) continue;
        ctx.warn(`flow calls ${protocol}(${arg}) but no ${protocol} block has that 1-based index or id; that call returns false`, ['flow'], true);
      }
    }
  }
  const setNames = [...code.matchAll(/(^|[^.\w$])set\s*\(\s*["']/g)].flatMap((m) => {
    const at = (m.index ?? 0) + m[0].length - 1;
    const quote = raw[at];
    const end = raw.indexOf(quote, at + 1);
    return end > at ? [raw.slice(at + 1, end)] : [];
  });
  return { flow: raw, setNames };
}
