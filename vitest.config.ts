import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability suite and the package test have their own configs (vitest.reliability.config.ts,
    // vitest.packages.config.ts) and scripts.
    exclude: ['test/reliability/**', 'test/packages/**', '**/node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // DynamoDB Local and the tests share two cores: keep the parallelism modest.
    maxWorkers: 2,
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
