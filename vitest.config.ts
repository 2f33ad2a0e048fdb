import { defineConfig } from 'vitest/config';

// Test tiers live in file names: *.unit.test.ts (pure, no services), *.int.test.ts (real
// PostgreSQL / Kafka), *.e2e.test.ts (the real app over HTTP). The integration tiers share one
// embedded PostgreSQL started by the global setup; each test file gets its own database.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.unit.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts', 'test/**/*.e2e.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
