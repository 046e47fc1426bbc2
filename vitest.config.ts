import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Node loads the CJS one for Pothos and yoga; without this
    // alias vite would hand our own imports the ESM copy, and two graphql realms cannot share a schema.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Files run in parallel forks; each test file builds its own app on its own database.
    pool: 'forks',
    maxWorkers: 2,
  },
});
