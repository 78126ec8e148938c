import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/test/**/*.test.ts', '**/src/**/*.test.ts'],
    // *.real.test.ts run under `pnpm test:real` (vitest.real.config.ts), which installs their components first.
    exclude: ['**/node_modules/**', '.rag/**', '.cache/**', '**/*.real.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
