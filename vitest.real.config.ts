import { defineConfig } from 'vitest/config';

// `pnpm test:real`: the tests that run against real components (real model weights, Qdrant's engine,
// docling-serve). scripts/test-real.sh installs those first; `pnpm test` leaves these files out.
export default defineConfig({
  test: {
    include: ['**/*.real.test.ts'],
    exclude: ['**/node_modules/**', '.rag/**', '.cache/**'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // One file at a time: each real component (models, servers) takes the machine's two cores.
    maxWorkers: 1,
  },
});
