/**
 * What a template `flow:` costs in the QuickJS sandbox (src/scanner/nuclei/engine/flow-sandbox.ts), side by side:
 *  - per run: a fresh asyncify instance (what the engine does: one suspended call per instance) against the
 *    compile of the module, which happens once per thread
 *  - per protocol call: `http(1) && http(2)` with host calls answering at once (the suspension round trip)
 *  - script CPU: a counting loop in the sandbox against the same loop in node
 *
 *   npm run bench:flow [-- runs]
 */
import { runFlowScript } from '../../src/scanner/nuclei/engine/flow-sandbox.js';

const runs = Number(process.argv[2] ?? 50);
const host = (calls: { n: number }) => ({
  call: async () => {
    calls.n += 1;
    return true;
  },
  set: () => undefined,
  context: () => ({ user: ['alice', 'bob'] }),
  log: () => undefined,
});

async function timed(label: string, fn: () => Promise<void>, times: number): Promise<number> {
  // V8 tiers the wasm code up during the first runs: measure after a few
  for (let i = 0; i < 3; i++) await fn();
  const start = performance.now();
  for (let i = 0; i < times; i++) await fn();
  const per = (performance.now() - start) / times;
  console.log(`${label.padEnd(58)} ${per.toFixed(2)} ms`);
  return per;
}

const firstStart = performance.now();
await runFlowScript('1', ['http'], host({ n: 0 }));
const first = performance.now() - firstStart;
console.log(`${'first run in this thread (module compile + instance)'.padEnd(58)} ${first.toFixed(2)} ms`);

const empty = await timed('empty flow (fresh instance, no calls)', () => runFlowScript('1', ['http'], host({ n: 0 })), runs);
const calls = { n: 0 };
const twoCalls = await timed('http(1) && http(2) (2 suspended host calls)', () => runFlowScript('http(1) && http(2)', ['http'], host(calls)), runs);
const hundred = await timed(
  'loop of 100 http() calls',
  () => runFlowScript('for (var i = 0; i < 100; i++) http(1)', ['http'], host(calls)),
  Math.max(5, Math.round(runs / 5)),
);
const loop = 'var s = 0; for (var i = 0; i < 2000000; i++) { s += i % 7 } s';
const sandboxLoop = await timed(
  '2e6-iteration loop in the sandbox',
  () => runFlowScript(loop, ['http'], host(calls), { cpuMs: 60_000, memoryBytes: 16 << 20, stackBytes: 256 << 10 }),
  5,
);
const nodeLoop = await timed(
  '2e6-iteration loop in node',
  async () => {
    let s = 0;
    for (let i = 0; i < 2_000_000; i++) s += i % 7;
    if (s < 0) console.log(s);
  },
  5,
);
console.log('');
console.log(`first run / later runs: ${(first / empty).toFixed(1)}x`);
console.log(`per suspended host call: ${((twoCalls - empty) / 2).toFixed(3)} ms; in a 100-call loop: ${((hundred - empty) / 100).toFixed(3)} ms`);
console.log(`sandbox loop / node loop: ${(sandboxLoop / nodeLoop).toFixed(0)}x`);
