import { defineConfig } from 'vitest/config';

/** Test files that talk to DynamoDB Local: each gets its own instance (test/helpers/dynamo-per-file.ts). */
const withTables = ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/cdk/bundles.test.ts'];

export default defineConfig({
  test: {
    // The reliability suite and the package test have their own configs (vitest.reliability.config.ts,
    // vitest.packages.config.ts) and scripts.
    exclude: ['test/reliability/**', 'test/packages/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // DynamoDB Local and the tests share two cores: keep the parallelism modest.
    maxWorkers: 2,
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      { extends: true, test: { name: 'plain', include: ['test/unit/**/*.test.ts', 'test/cdk/**/*.test.ts'], exclude: [...withTables, '**/node_modules/**'] } },
      // One shared DynamoDB Local slowed the whole run 3–6× as the files filled its stream (every
      // GetRecords costs time in proportion to all records the instance holds); a JVM per file costs
      // about 4 s and keeps each file's speed its own.
      { extends: true, test: { name: 'tables', include: withTables, setupFiles: ['test/helpers/dynamo-per-file.ts'] } },
    ],
  },
});
