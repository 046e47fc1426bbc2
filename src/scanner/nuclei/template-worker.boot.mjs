// Entry of a template worker thread. The server runs TypeScript through tsx; a worker thread does not inherit
// its loader, so the worker registers it before loading the real entry (template-worker.ts).
import { register } from 'tsx/esm/api';

register();
await import('./template-worker.ts');
