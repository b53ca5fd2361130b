import { defineConfig } from 'vitest/config'

// One run over the whole monorepo. Unit tests sit beside the code (src/**/*.test.ts);
// integration tests live in test/ folders and share the real Postgres and Redis that
// packages/testkit/src/global-setup.ts starts once per run.
export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{apps,packages,tools}/*/src/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['{apps,packages,tools}/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['./packages/testkit/src/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
    ],
  },
})
