/**
 * Runs the `network` (`tcp`) blocks of parsed templates against one host through an injected connector, as
 * nuclei's pkg/protocols/network does:
 *  - ports: no `port:` → the target as given; one port → used; several → each is probed (connect, close) and the
 *    open ones run. A target `port` without `scheme` always wins over the template's (nuclei's host:port input).
 *  - each host entry (`{{Hostname}}`, `{{Host}}:7001`, `tls://...`) is rendered and connected to once per block;
 *    every input is rendered, hex-decoded when `type: hex`, written, and when it has `read` that many bytes are
 *    read (Go's single Read: what has arrived, up to n), kept under its `name`; then the final read (`read-size`,
 *    default 1024, or everything with `read-all`).
 *  - the event is nuclei's: host, matched (the address), request (bytes written), data (final read), raw (all
 *    reads), type, template-id, ip, the template variables and the named reads; matchers see `body` / `all` as data.
 *  - a failed connect, write or input read gives no event; a final read that times out still does (as nuclei).
 */
import { payloadCombinations, renderPayloadValues, type PayloadValues } from './payloads.js';
import { randomInt } from 'node:crypto';
import { decodeBytes, encodeString } from '../bytes.js';
import { renderMarkers, scopeOf, type DslRecord, type DslScope, type DslValue } from '../dsl/index.js';
import type { NetworkRequestBlock, NetworkRunDeps, NetworkRunOutput, NetworkRunStats, NetworkTarget } from '../network-types.js';
import type { NucleiTemplate, RunWarning, TemplateResult } from '../types.js';
import { addressVariables, createNetworkRunStats, hexBytes, inputAddress, networkInput, networkPart, networkResults } from './network-event.js';
export { createNetworkRunStats, networkTemplatePorts } from './network-event.js';
import { SocketReader, splitHostPort, writeWithTimeout } from './network-io.js';
import { executeOperators, MutableScope, type OperatorResult } from './operators.js';
import { RequestOast, evaluateInteractions, perRequestVariables, renderRequestVariables } from './oast.js';
import { withoutOast } from '../oast.js';
import { JarmCache } from '../jarm/precompute.js';

const RANDSTR_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

interface Ctx {
  target: NetworkTarget;
  deps: NetworkRunDeps;
  stats: NetworkRunStats;
  warnings: RunWarning[];
  timeoutMs: number;
  readTimeoutMs: number;
  maxReadBytes: number;
  maxConnections: number;
  /** `jarm(host:port)` fingerprints of this run (computed before the operators, which are synchronous). */
  jarm: JarmCache;
}

class NetworkTemplateRun {
  private readonly results: TemplateResult[] = [];
  private readonly resultKeys = new Set<string>();
  /** `<blockId>_<name>` values of earlier blocks. */
  private readonly previous: DslRecord = Object.create(null) as DslRecord;
  private readonly randstr = new Map<string, string>();
  private connections = 0;
  /** Variables using `{{interactsh-url}}`: rendered per connection, with its own OAST URL. */
  private readonly oastVars: Set<string>;

  constructor(
    private readonly tpl: NucleiTemplate,
    private readonly ctx: Ctx,
  ) {
    this.oastVars = perRequestVariables(tpl);
  }

  private warn(message: string, path?: string) {
    const w: RunWarning = { templateId: this.tpl.id, path, message };
    this.ctx.warnings.push(w);
    this.ctx.deps.onWarning?.(w);
  }

  private aborted(): boolean {
    return this.ctx.deps.signal?.aborted === true;
  }

  private randstrScope(): DslScope {
    return {
      get: (name: string) => {
        if (!/^randstr(_\d+)?$/.test(name)) return undefined;
        let v = this.randstr.get(name);
        if (!v) {
          v = Array.from({ length: 27 }, () => RANDSTR_CHARS[randomInt(RANDSTR_CHARS.length)]).join('');
          this.randstr.set(name, v);
        }
        return v;
      },
    };
  }

  /** Target variables of the address < template variables (evaluated in order, as far as they resolve) < constants. */
  private variables(address: string): DslRecord {
    const vars: DslRecord = Object.assign(Object.create(null) as DslRecord, addressVariables(address));
    const pending = new Map(this.tpl.variables);
    for (let progress = true; progress && pending.size; ) {
      progress = false;
      for (const [name, raw] of pending) {
        const r = renderMarkers(raw, scopeOf(vars, this.tpl.constants, this.randstrScope()));
        if (r.unresolved.length || r.errors.length) continue;
        vars[name] = r.text;
        pending.delete(name);
        progress = true;
      }
    }
    return Object.assign(vars, this.tpl.constants);
  }

  async run(): Promise<TemplateResult[]> {
    let matched = false;
    for (const block of this.tpl.network ?? []) {
      if (this.aborted() || (matched && this.tpl.stopAtFirstMatch)) break;
      if (block.skip) {
        this.warn(`request block skipped: ${block.skip}`, block.path);
        continue;
      }
      const unsupported = block.matchers.filter((m) => m.unsupported);
      if (unsupported.length) {
        this.warn(
          `${unsupported.map((m) => `${m.path}: ${m.unsupported}`).join('; ')} — this request block cannot match (it still runs for extractors)`,
          block.path,
        );
      }
      if (await this.runBlock(block, unsupported.length > 0)) matched = true;
    }
    return this.results;
  }

  /** nuclei ExecuteWithResults: which inputs (host / host:port) the block runs on. */
  private async runBlock(block: NetworkRequestBlock, unsupported: boolean): Promise<boolean> {
    const visited = new Set<string>();
    if (block.ports.length === 0) return this.runOnInput(block, networkInput(this.ctx.target, undefined, block.excludePorts), visited, unsupported);
    const ports = block.ports.length === 1 ? block.ports : await this.openPorts(block);
    let matched = false;
    for (const port of ports) {
      if (this.aborted()) break;
      if (await this.runOnInput(block, networkInput(this.ctx.target, port, block.excludePorts), visited, unsupported)) {
        matched = true;
        if (block.stopAtFirstMatch) break;
      }
    }
    return matched;
  }

  /** Several template ports: keep those that accept a connection (nuclei's getOpenPorts). */
  private async openPorts(block: NetworkRequestBlock): Promise<number[]> {
    const open: number[] = [];
    const probed = new Map<string, boolean>();
    for (const port of block.ports) {
      const split = splitHostPort(inputAddress(networkInput(this.ctx.target, port, block.excludePorts)));
      if (!split || this.aborted()) continue;
      const key = `${split.host}|${split.port}`;
      if (!probed.has(key)) {
        if (!this.takeConnection(block)) break;
        try {
          const socket = await this.ctx.deps.connect({
            host: split.host,
            port: split.port,
            tls: false,
            timeoutMs: this.ctx.timeoutMs,
            signal: this.ctx.deps.signal,
          });
          socket.destroy();
          probed.set(key, true);
        } catch {
          probed.set(key, false);
        }
      }
      if (probed.get(key)) open.push(port);
    }
    return open;
  }

  private takeConnection(block: NetworkRequestBlock): boolean {
    if (this.connections >= this.ctx.maxConnections) {
      this.warn(`connection limit of ${this.ctx.maxConnections} per template reached; remaining connections skipped`, block.path);
      return false;
    }
    this.connections++;
    return true;
  }

  /** nuclei executeOnTarget: every host entry of the block, each address once. */
  private async runOnInput(block: NetworkRequestBlock, input: string, visited: Set<string>, unsupported: boolean): Promise<boolean> {
    const address = inputAddress(input);
    const variables = this.variables(address);
    let matched = false;
    for (const [i, entry] of block.addresses.entries()) {
      if (this.aborted()) break;
      const entryPath = `${block.path}.host[${i}]`;
      const rendered = renderMarkers(entry.address, scopeOf(variables, this.previous, this.randstrScope()));
      if (rendered.unresolved.length || rendered.errors.length) {
        this.warn(
          `host ${JSON.stringify(entry.address)} not used: ${[...rendered.unresolved.map((v) => `unresolved {{${v}}}`), ...rendered.errors].join('; ')}`,
          entryPath,
        );
        continue;
      }
      const actual = rendered.text.trim();
      if (visited.has(actual)) continue;
      visited.add(actual);
      if (await this.runOnAddress(block, { input, address, actual, tls: entry.tls, variables, entryPath, unsupported })) {
        matched = true;
        if (block.stopAtFirstMatch) break;
      }
    }
    return matched;
  }

  /** nuclei executeRequestWithPayloads: per payload combination (or once), one connection, the inputs, the final read, one event. */
  private async runOnAddress(
    block: NetworkRequestBlock,
    a: { input: string; address: string; actual: string; tls: boolean; variables: DslRecord; entryPath: string; unsupported: boolean },
  ): Promise<boolean> {
    const split = splitHostPort(a.actual);
    if (!split) {
      this.warn(`no port provided in network protocol request for ${JSON.stringify(a.actual)}`, a.entryPath);
      return false;
    }
    const targetHost = this.ctx.target.host.toLowerCase();
    if (!this.ctx.deps.allowOffTargetHosts && split.host.toLowerCase() !== targetHost) {
      this.warn(`connection to ${a.actual} skipped: it does not go to the target ${this.ctx.target.host}`, a.entryPath);
      return false;
    }
    // One connection per payload combination (nuclei), each counted against the connection cap.
    const rounds: Iterable<PayloadValues | undefined> = block.payloads ? payloadCombinations(block.payloads) : [undefined];
    let matched = false;
    for (const payload of rounds) {
      if (this.aborted() || !this.takeConnection(block)) break;
      const variables = payload
        ? Object.assign(Object.create(null) as DslRecord, a.variables, renderPayloadValues(payload, scopeOf(a.variables)))
        : a.variables;
      if (await this.connectAndExchange(block, split, { ...a, variables })) {
        matched = true;
        if (block.stopAtFirstMatch) break;
      }
    }
    return matched;
  }

  private async connectAndExchange(
    block: NetworkRequestBlock,
    split: { host: string; port: number },
    a: { input: string; address: string; actual: string; tls: boolean; variables: DslRecord; entryPath: string; unsupported: boolean },
  ): Promise<boolean> {
    const { stats, deps } = this.ctx;
    stats.connections++;
    let socket: Awaited<ReturnType<NetworkRunDeps['connect']>>;
    try {
      socket = await deps.connect({ host: split.host, port: split.port, tls: a.tls, timeoutMs: this.ctx.timeoutMs, signal: deps.signal });
    } catch (err) {
      stats.connectionsFailed++;
      this.warn(`could not connect to ${a.tls ? 'tls://' : ''}${a.actual}: ${(err as Error).message}`, a.entryPath);
      return false;
    }
    try {
      return await this.exchange(block, a, socket);
    } finally {
      socket.destroy();
    }
  }

  private async exchange(
    block: NetworkRequestBlock,
    a: { input: string; address: string; actual: string; variables: DslRecord; entryPath: string; unsupported: boolean },
    socket: Awaited<ReturnType<NetworkRunDeps['connect']>>,
  ): Promise<boolean> {
    const { stats, deps, readTimeoutMs } = this.ctx;
    const reader = new SocketReader(socket, this.ctx.maxReadBytes);
    // nuclei: Hostname is the input's address whatever the host entry was
    const interim: DslRecord = Object.assign(Object.create(null) as DslRecord, a.variables, { Hostname: a.address });
    const oast = new RequestOast(deps.oast);
    Object.assign(
      interim,
      renderRequestVariables(this.tpl, this.oastVars, (found) => scopeOf(interim, found, this.randstrScope(), oast.layer)),
    );
    const named: DslRecord = Object.create(null) as DslRecord;
    const sent: Buffer[] = [];
    const received: Buffer[] = [];
    // nuclei also runs internal extractors on each named read, into a map later inputs never see; the final
    // operators below see the same named reads, so that step would change nothing and is left out
    for (const [i, input] of block.inputs.entries()) {
      const inputPath = `${block.path}.inputs[${i}]`;
      const rendered = renderMarkers(input.data, scopeOf(this.previous, interim, this.randstrScope(), oast.layer));
      if (rendered.errors.length) {
        stats.connectionsFailed++;
        this.warn(`could not evaluate the input: ${rendered.errors.join('; ')}`, inputPath);
        return false;
      }
      if (rendered.unresolved.length) {
        this.warn(`request to ${a.actual} not sent: unresolved ${rendered.unresolved.map((v) => `{{${v}}}`).join(', ')}`, inputPath);
        return false;
      }
      const bytes = input.type === 'hex' ? hexBytes(rendered.text) : encodeString(rendered.text);
      if (!bytes) {
        stats.connectionsFailed++;
        this.warn(`input is not valid hex after rendering: ${JSON.stringify(rendered.text.slice(0, 80))}`, inputPath);
        return false;
      }
      try {
        sent.push(bytes);
        await writeWithTimeout(socket, bytes, this.ctx.timeoutMs);
        if (input.read > 0) {
          const buffer = await reader.read(input.read, readTimeoutMs, deps.signal);
          received.push(buffer);
          const text = decodeBytes(buffer);
          if (input.name) {
            named[input.name] = text;
            interim[input.name] = text;
          }
        }
      } catch (err) {
        stats.connectionsFailed++;
        this.warn(`${a.actual}: ${(err as Error).message}`, inputPath);
        return false;
      }
    }
    let final: Buffer = Buffer.alloc(0);
    try {
      final = block.readAll ? await reader.readAll(readTimeoutMs, deps.signal) : await reader.read(block.readSize, readTimeoutMs, deps.signal);
    } catch (err) {
      // nuclei logs this and still matches on what earlier reads returned. With nothing read at all the service
      // never answered: said, so a caller does not take the silence for a clean run.
      if (!received.some((buffer) => buffer.length)) this.warn(`no answer from ${a.actual}: ${(err as Error).message}`, block.path);
    }
    received.push(final);
    if (this.aborted()) return false;
    const request = decodeBytes(Buffer.concat(sent));
    const raw = decodeBytes(Buffer.concat(received));
    const data = decodeBytes(final);
    const event: Record<string, DslValue> = {
      host: a.input,
      matched: a.actual,
      request,
      data,
      raw,
      type: 'network',
      'template-id': this.tpl.id,
    };
    if ((socket as { remoteAddress?: string }).remoteAddress) event.ip = (socket as { remoteAddress?: string }).remoteAddress!;
    // fingerprints the block's jarm() calls ask for; all is read, so a one-client-at-a-time service is freed first
    const jarm = await this.ctx.jarm.forBlock(block, scopeOf(event, this.previous, interim, named), this.ctx.target.host, deps.allowOffTargetHosts, () =>
      socket.destroy(),
    );
    for (const w of jarm.warnings) this.warn(w, block.path);
    if (this.aborted()) return false;
    const scope = new MutableScope(scopeOf(jarm.layer, event, this.previous, interim, named));
    const op = executeOperators(block, scope, a.unsupported, networkPart);
    if (block.id) {
      for (const [k, v] of Object.entries({ ...event, ...named })) this.previous[`${block.id}_${k}`] = v;
      for (const [k, v] of scope.local) this.previous[`${block.id}_${k}`] = v;
    }
    const evidence = { matched: a.actual, request, response: raw };
    if (op) this.addResults(block, op, evidence);
    // the event again with each interaction of this connection's URL (engine/oast.ts)
    const evaluate = (fields: Record<string, DslValue>) => {
      const again = executeOperators(block, new MutableScope(scopeOf(event, this.previous, interim, named, fields)), a.unsupported, networkPart);
      if (again) this.addResults(block, again, evidence);
      return again?.matched ?? false;
    };
    const oastMatched = await evaluateInteractions(oast, block, deps, evaluate, (message) => this.warn(message, block.path));
    return oastMatched || (op?.matched ?? false);
  }

  private addResults(block: NetworkRequestBlock, op: OperatorResult, evidence: { matched: string; request: string; response: string }) {
    for (const r of networkResults(this.tpl, block.matchers.length > 0, op, evidence)) {
      const key = JSON.stringify([r.matcherName ?? '', r.extractorName ?? '', r.matchedUrl, r.extractedResults]);
      if (this.resultKeys.has(key)) continue;
      this.resultKeys.add(key);
      this.results.push(r);
    }
  }
}

/**
 * Run the network blocks of templates against one host; templates without network blocks are ignored.
 * Templates run with bounded concurrency; results keep the order of `templates`.
 */
export async function runNetworkTemplates(templates: NucleiTemplate[], target: NetworkTarget, deps: NetworkRunDeps): Promise<NetworkRunOutput> {
  const stats = deps.stats ?? createNetworkRunStats();
  const ctx: Ctx = {
    target,
    deps,
    stats,
    warnings: [],
    timeoutMs: deps.timeoutMs ?? 10_000,
    readTimeoutMs: deps.readTimeoutMs ?? 5_000,
    maxReadBytes: Math.max(1, deps.maxReadBytes ?? 1024 * 1024),
    maxConnections: Math.max(1, deps.maxConnectionsPerTemplate ?? 50),
    jarm: new JarmCache({ connect: deps.connect, timeoutMs: deps.jarmTimeoutMs, signal: deps.signal }),
  };
  const runnable = templates.filter((t) => t.network?.length);
  const perTemplate: TemplateResult[][] = runnable.map(() => []);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < runnable.length && !deps.signal?.aborted; i = next++) {
      // a template using OAST is skipped with the reason when there is no client to give it URLs
      const tpl = deps.oast ? runnable[i]! : withoutOast(runnable[i]!);
      if (tpl.skip) {
        stats.templatesSkipped++;
        const w = { templateId: tpl.id, message: `template skipped: ${tpl.skip}` };
        ctx.warnings.push(w);
        deps.onWarning?.(w);
        continue;
      }
      stats.templatesRun++;
      try {
        perTemplate[i] = await new NetworkTemplateRun(tpl, ctx).run();
      } catch (err) {
        const w = { templateId: tpl.id, message: `template failed: ${(err as Error).message}` };
        ctx.warnings.push(w);
        deps.onWarning?.(w);
      }
    }
  };
  const workers = Math.max(1, Math.min(deps.concurrency ?? 4, runnable.length || 1));
  await Promise.all(Array.from({ length: workers }, worker));
  return { results: perTemplate.flat(), warnings: ctx.warnings, stats };
}
