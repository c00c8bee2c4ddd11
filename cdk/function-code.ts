/**
 * Where a SluiceFunction's code comes from, in this repository: NodejsFunction bundles
 * functions/<handlerModule>.ts with esbuild when the app is synthesized (`cdk synth`).
 *
 * The construct package (packages/cdk) is built with `function-code.prebuilt.ts` in place
 * of this module: its bundles are made with the same `lambdaBundling` settings when the
 * package is built, so a user's CDK app needs neither esbuild nor Docker.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { esbuildTarget, HANDLER, lambdaBundling } from './lambda-bundling.js';

/** The repository root: bundling starts here (package-lock.json, tsconfig.json, functions/). */
export const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/** The NodejsFunction props that say where the code is and how it is built. */
export type FunctionCode = Pick<NodejsFunctionProps, 'code' | 'handler' | 'entry' | 'projectRoot' | 'depsLockFilePath' | 'bundling'>;

export function functionCode(handlerModule: string, runtime: Runtime): FunctionCode {
  return {
    entry: join(projectRoot, 'functions', `${handlerModule}.ts`),
    handler: HANDLER,
    projectRoot,
    depsLockFilePath: join(projectRoot, 'package-lock.json'),
    bundling: {
      format: OutputFormat.ESM,
      target: esbuildTarget(runtime),
      mainFields: [...lambdaBundling.mainFields],
      externalModules: [],
      minify: lambdaBundling.minify,
      keepNames: lambdaBundling.keepNames,
      sourceMap: lambdaBundling.sourcemap,
      sourcesContent: lambdaBundling.sourcesContent,
      banner: lambdaBundling.banner,
      forceDockerBundling: false,
    },
  };
}
