/**
 * Where a SluiceFunction's code comes from in the construct package (packages/cdk): the
 * package build puts this module in place of `function-code.ts` and bundles every function
 * into `dist/lambda/<handlerModule>/` beside the package's `dist/index.js`. Synthesis only
 * copies those directories into the cloud assembly: no esbuild, no Docker.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Code, type Runtime } from 'aws-cdk-lib/aws-lambda';
import type { FunctionCode } from './function-code.js';
import { BUNDLE_FILE, HANDLER } from './lambda-bundling.js';

/** Resolved against the bundled `dist/index.js`, not this source file. */
const bundlesDir = fileURLToPath(new URL('./lambda/', import.meta.url));

export function functionCode(handlerModule: string, _runtime: Runtime): FunctionCode {
  const dir = join(bundlesDir, handlerModule);
  if (!existsSync(join(dir, BUNDLE_FILE))) {
    throw new Error(`This package ships no prebuilt code for functions/${handlerModule}.ts (looked in ${dir}).`);
  }
  return { code: Code.fromAsset(dir), handler: HANDLER };
}
