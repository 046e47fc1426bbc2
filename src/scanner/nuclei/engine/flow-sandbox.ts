/**
 * The sandbox a template's `flow:` script runs in: QuickJS compiled to WebAssembly (quickjs-emscripten, the
 * asyncify build), never node's `eval` or `node:vm`. The script sees only what nuclei's flow gives it: one
 * function per protocol (`http(1)`, `dns("id")`...), `set`, `log`, `iterate`, `Dedupe` and the `template`
 * context; no timers, no modules, no host objects.
 *
 * Why asyncify: flow scripts are synchronous (`http(1) && http(2)`): a protocol call must return its boolean
 * before the next expression runs, while requests are asynchronous here. The asyncify build suspends the
 * interpreter inside the host call and resumes it when the request is done. An asyncify module runs one
 * suspended call at a time, so each flow run gets its own instance of a module compiled once per thread.
 *
 * Bounds: a CPU budget for the time the script itself runs (host calls excluded: they have their own timeouts),
 * enforced by QuickJS's interrupt handler, so `while(true){}` ends; a heap limit and a stack limit.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import asyncifyVariant from '@jitl/quickjs-wasmfile-release-asyncify';
import {
  type QuickJSAsyncContext,
  type QuickJSAsyncVariant,
  type QuickJSHandle,
  newQuickJSAsyncWASMModuleFromVariant,
  newVariant,
} from 'quickjs-emscripten-core';

// The package's types are CommonJS (its default export then types as the namespace); at run time ESM gives the variant.
const variant = ((asyncifyVariant as unknown as { default?: QuickJSAsyncVariant }).default ?? asyncifyVariant) as QuickJSAsyncVariant;

export interface FlowLimits {
  /** Time the script may run on the CPU, host calls excluded. */
  cpuMs: number;
  /** QuickJS heap limit. */
  memoryBytes: number;
  /** QuickJS stack limit. */
  stackBytes: number;
}

export const DEFAULT_FLOW_LIMITS: FlowLimits = { cpuMs: 1_000, memoryBytes: 32 * 1024 * 1024, stackBytes: 256 * 1024 };

/** What the script can reach on the host side. */
export interface FlowHost {
  /** Runs blocks of a protocol (all of them when `ids` is empty); true when nuclei's flow would say they matched. */
  call(protocol: string, ids: string[]): Promise<boolean>;
  /** `set(name, value)`: the value is JSON-shaped (strings, numbers, booleans, arrays, objects, null). */
  set(name: string, value: unknown): void;
  /** The template context as the script's `template` object (JSON-shaped). */
  context(): Record<string, unknown>;
  log(text: string): void;
  signal?: AbortSignal;
}

export class FlowScriptError extends Error {
  constructor(
    message: string,
    readonly code: 'FLOW_TIMEOUT' | 'FLOW_MEMORY' | 'FLOW_SCRIPT_ERROR' | 'FLOW_ABORTED',
  ) {
    super(message);
    this.name = 'FlowScriptError';
  }
}

/** nuclei's flow builtins (pkg/tmplexec/flow/vm.go, builtin/dedupe.go), written in the sandbox's own JS. */
const PRELUDE = `
(function (g) {
  var callProtocol = g.__protocol, hostSet = g.__set, hostLog = g.__log, hostContext = g.__context;
  delete g.__protocol; delete g.__set; delete g.__log; delete g.__context;
  function refresh() { g.template = JSON.parse(hostContext()); }
  g.__protocols.forEach(function (name) {
    g[name] = function () {
      var ids = [];
      for (var i = 0; i < arguments.length; i++) ids.push(String(arguments[i]));
      var matched = callProtocol(name, JSON.stringify(ids));
      refresh();
      return matched;
    };
  });
  delete g.__protocols;
  g.set = function (name, value) {
    var json = JSON.stringify(value === undefined ? null : value);
    hostSet(String(name), json === undefined ? 'null' : json);
    g.template[String(name)] = value;
    return null;
  };
  g.log = function (value) {
    hostLog(typeof value === 'string' ? value : JSON.stringify(value));
    return value;
  };
  function flatten(args) {
    var out = [];
    for (var i = 0; i < args.length; i++) {
      var v = args[i];
      if (v === null || v === undefined) continue;
      if (Array.isArray(v)) for (var j = 0; j < v.length; j++) out.push(v[j]);
      else out.push(v);
    }
    return out;
  }
  g.iterate = function () { return flatten(arguments); };
  g.Dedupe = function () {
    var seen = {}, values = [];
    this.Add = function () {
      var all = flatten(arguments);
      for (var i = 0; i < all.length; i++) {
        var key = typeof all[i] === 'string' ? all[i] : JSON.stringify(all[i]);
        if (!Object.prototype.hasOwnProperty.call(seen, key)) { seen[key] = true; values.push(all[i]); }
      }
      return true;
    };
    this.Values = function () { return values.slice(); };
  };
  refresh();
})(globalThis);
`;

let compiled: Promise<WebAssembly.Module> | undefined;

/** The WebAssembly module is compiled once per thread; each run instantiates it (asyncify: one suspension per instance). */
function wasmModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const require = createRequire(import.meta.url);
    const file = require.resolve('@jitl/quickjs-wasmfile-release-asyncify/wasm');
    return WebAssembly.compile(await readFile(file));
  })();
  return compiled;
}

/** Runs a flow script to its end; throws FlowScriptError (timeout, memory, script error, abort). */
export async function runFlowScript(source: string, protocols: readonly string[], host: FlowHost, limits: FlowLimits = DEFAULT_FLOW_LIMITS): Promise<void> {
  const module = await newQuickJSAsyncWASMModuleFromVariant(newVariant(variant, { wasmModule: await wasmModule() }));
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  // CPU time of the script: wall time minus the time spent waiting in host calls
  let spent = 0;
  let runningSince = performance.now();
  let inHost = false;
  let timedOut = false;
  runtime.setInterruptHandler(() => {
    if (host.signal?.aborted) return true;
    if (!inHost && spent + (performance.now() - runningSince) > limits.cpuMs) timedOut = true;
    return timedOut;
  });
  const vm = runtime.newContext();
  try {
    installHost(vm, protocols, host, {
      enter() {
        spent += performance.now() - runningSince;
        inHost = true;
      },
      leave() {
        inHost = false;
        runningSince = performance.now();
      },
    });
    const prelude = vm.evalCode(PRELUDE, 'flow-prelude.js');
    if (prelude.error) throw new FlowScriptError(`flow sandbox failed to start: ${describe(vm, prelude.error)}`, 'FLOW_SCRIPT_ERROR');
    prelude.value.dispose();
    runningSince = performance.now();
    let result = await evaluate(vm, source);
    // nuclei accepts a top-level `return` in a flow (it runs the script as a function body)
    if (result.error && /return not in a function/i.test(describe(vm, result.error, false))) {
      result.error.dispose();
      result = await evaluate(vm, `(function () {\n${source}\n})()`);
    }
    if (result.error) {
      const message = describe(vm, result.error);
      result.error.dispose();
      if (host.signal?.aborted) throw new FlowScriptError('flow stopped: the run was aborted', 'FLOW_ABORTED');
      if (timedOut) throw new FlowScriptError(`flow script stopped: it ran past its CPU budget of ${limits.cpuMs} ms (an endless loop?)`, 'FLOW_TIMEOUT');
      if (/out of memory/i.test(message)) {
        throw new FlowScriptError(
          `flow script stopped: it used more than its memory limit of ${Math.round(limits.memoryBytes / 1024 / 1024)} MiB`,
          'FLOW_MEMORY',
        );
      }
      if (/stack overflow/i.test(message)) throw new FlowScriptError(`flow script stopped: ${message} (stack limit ${limits.stackBytes} bytes)`, 'FLOW_MEMORY');
      throw new FlowScriptError(`flow script error: ${message}`, 'FLOW_SCRIPT_ERROR');
    }
    result.value.dispose();
  } catch (err) {
    if (err instanceof FlowScriptError) throw err;
    throw new FlowScriptError(`flow sandbox failed: ${(err as Error).message}`, 'FLOW_SCRIPT_ERROR');
  } finally {
    // The module instance is this run's alone: freeing the context is enough, the rest goes with the instance.
    // (Disposing the async runtime too trips quickjs-emscripten 0.32 freeing host functions after it is gone.)
    try {
      vm.dispose();
    } catch {
      // after a trap (stack overflow) the instance is unusable anyway; it is dropped with this run
    }
  }
}

/**
 * Deep recursion overflows V8's own stack (the asyncify build's wasm frames are large) before QuickJS's stack
 * check trips: node throws a RangeError out of the wasm call, which we report as the script's stack overflow.
 */
async function evaluate(vm: QuickJSAsyncContext, code: string) {
  try {
    return await vm.evalCodeAsync(code, 'flow.js');
  } catch (err) {
    if (err instanceof RangeError) throw new FlowScriptError('flow script stopped: stack overflow (too deep recursion)', 'FLOW_MEMORY');
    throw err;
  }
}

function describe(vm: QuickJSAsyncContext, error: QuickJSHandle, withStack = false): string {
  try {
    const dumped = vm.dump(error) as unknown;
    if (dumped && typeof dumped === 'object') {
      const e = dumped as { name?: string; message?: string; stack?: string };
      const text = `${e.name ?? 'Error'}: ${e.message ?? ''}`;
      return withStack && e.stack ? `${text}\n${e.stack}` : text;
    }
    return String(dumped);
  } catch {
    return 'unknown error';
  }
}

function installHost(vm: QuickJSAsyncContext, protocols: readonly string[], host: FlowHost, clock: { enter(): void; leave(): void }) {
  const global = vm.global;
  const names = vm.newArray();
  protocols.forEach((name, i) => {
    const handle = vm.newString(name);
    vm.setProp(names, i, handle);
    handle.dispose();
  });
  vm.setProp(global, '__protocols', names);
  names.dispose();

  const protocol = vm.newAsyncifiedFunction('__protocol', async (nameHandle, idsHandle) => {
    const name = vm.getString(nameHandle);
    const ids = JSON.parse(vm.getString(idsHandle)) as string[];
    clock.enter();
    try {
      return (await host.call(name, ids)) ? vm.true : vm.false;
    } finally {
      clock.leave();
    }
  });
  vm.setProp(global, '__protocol', protocol);
  protocol.dispose();

  const set = vm.newFunction('__set', (nameHandle, jsonHandle) => {
    host.set(vm.getString(nameHandle), JSON.parse(vm.getString(jsonHandle)));
    return vm.undefined;
  });
  vm.setProp(global, '__set', set);
  set.dispose();

  const log = vm.newFunction('__log', (textHandle) => {
    host.log(vm.getString(textHandle));
    return vm.undefined;
  });
  vm.setProp(global, '__log', log);
  log.dispose();

  const context = vm.newFunction('__context', () => vm.newString(JSON.stringify(host.context())));
  vm.setProp(global, '__context', context);
  context.dispose();
}
