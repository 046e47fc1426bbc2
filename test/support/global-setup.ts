import { ensureTemplate } from './template.js';

/** Runs once before all test files: builds the migrated PGlite template they start from. */
export default async function setup(): Promise<void> {
  await ensureTemplate();
}
