/**
 * How every Sluice function is bundled, in one place for both ways its code is made:
 * by NodejsFunction when this repository's app is synthesized (`function-code.ts`), and by
 * the construct package's build, which ships the bundles prebuilt (`packages/build`).
 */
import { Runtime } from 'aws-cdk-lib/aws-lambda';

/** Node.js 22 is what the project builds and tests for (SPEC §5: Node.js 22+). */
export const DEFAULT_RUNTIME = Runtime.NODEJS_22_X;

/** The bundle's file in the function's code: NodejsFunction names an ESM bundle `index.mjs`. */
export const BUNDLE_FILE = 'index.mjs';

/** Every function exports `handler` from its bundle. */
export const HANDLER = 'index.handler';

/** Lets `require()` in bundled CommonJS dependencies (parts of the AWS SDK) work inside the ESM bundle. */
const REQUIRE_BANNER =
  "import { createRequire as __sluiceCreateRequire } from 'node:module'; const require = __sluiceCreateRequire(import.meta.url);";

/** esbuild's target for a Lambda runtime: `nodejs22.x` → `node22`. */
export const esbuildTarget = (runtime: Runtime) => runtime.name.replace(/^nodejs(\d+)\.x$/, 'node$1');

/**
 * The esbuild settings (besides entry, target and output). The AWS SDK is bundled too
 * (no external modules): the versions in package-lock.json are the ones tested.
 */
export const lambdaBundling = {
  format: 'esm',
  platform: 'node',
  mainFields: ['module', 'main'],
  minify: true,
  keepNames: true,
  sourcemap: true,
  sourcesContent: false,
  banner: REQUIRE_BANNER,
} as const;
