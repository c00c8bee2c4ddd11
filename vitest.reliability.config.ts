/**
 * The reliability and security suite (test/reliability, issue 9): crashes,
 * injected faults, load, fuzzing and security. `npm run test:reliability`
 * runs it at full size; SLUICE_RELIABILITY_SCALE=ci runs the shortened
 * variant (`npm run test:reliability:ci`, part of `npm test`).
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    // Each file gets its own DynamoDB Local: a shared one slows down as the files fill its stream
    // (test/helpers/dynamo-per-file.ts).
    setupFiles: ['test/helpers/dynamo-per-file.ts'],
    testTimeout: 20 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The crash and load tests saturate DynamoDB Local and the two cores on their own: one file at a time.
    maxWorkers: 1,
    fileParallelism: false,
    // The load test reads the heap after a full collection.
    execArgv: ['--expose-gc'],
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
