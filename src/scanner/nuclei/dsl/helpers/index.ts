/** Registers every helper family, then nuclei's underscore-free aliases (which need the full table). */
import './strings.js';
import './encoding.js';
import './hashing.js';
import './numbers.js';
import './time.js';
import './crypto.js';
import './archive.js';
import './net.js';
import './title.js';
import './debug.js';
import './jarm.js';
import { FUNCTIONS } from './registry.js';

export { setDslDebugSink, type DslDebugSink } from './debug.js';
export { FUNCTIONS } from './registry.js';

// nuclei also registers every helper without underscores (tolower, base64decode, ...)
for (const [name, d] of [...FUNCTIONS]) {
  const alias = name.replace(/_/g, '');
  if (alias !== name && !FUNCTIONS.has(alias)) FUNCTIONS.set(alias, d);
}

export function isKnownFunction(name: string): boolean {
  return FUNCTIONS.has(name);
}

export function knownFunctionNames(): string[] {
  return [...FUNCTIONS.keys()].sort();
}
