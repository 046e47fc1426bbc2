// Evaluates one DSL expression in a worker thread (as template-worker.ts does) and posts the result back.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { evaluateExpression, scopeOf } = await import('../../src/scanner/nuclei/dsl/index.ts');
try {
  parentPort.postMessage({ value: evaluateExpression(workerData.expression, scopeOf({})) });
} catch (err) {
  parentPort.postMessage({ error: err.message });
}
