// Entry of the embedded database's thread when the server runs from source: a worker thread does not inherit
// tsx's loader, so it registers it before loading the real entry (worker.ts). Compiled, dist runs worker.js.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
