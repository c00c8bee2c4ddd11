/**
 * The package test (test/packages, issue 18): builds and packs the published packages and
 * uses them from a folder outside the repository. `npm test` runs it on its own, after the
 * main suite (`npm run test:packages`): its builds, installs, compilations and synthesis
 * would otherwise take the cores that the concurrency tests running beside it need.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/packages/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    env: { POWERTOOLS_LOG_LEVEL: 'ERROR', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
