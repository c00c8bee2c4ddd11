/**
 * The construct package's prebuilt function code: every handler module a
 * `SluiceService` deploys (with either entry point), bundled with the settings NodejsFunction uses at synth time
 * in this repository (`cdk/lambda-bundling.ts`), into `<outDir>/<handlerModule>/index.mjs`
 * (with its source map) — the directories `function-code.prebuilt.ts` hands to
 * `Code.fromAsset`.
 */
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { build } from 'esbuild';
import { BUNDLE_FILE, DEFAULT_RUNTIME, esbuildTarget, lambdaBundling } from '../../cdk/lambda-bundling.js';
import { SluiceService } from '../../cdk/sluice-service.js';

/**
 * The handler modules (`api/function-url`, `api/send-message`, `timers/minute`, …) a
 * SluiceService deploys with either entry point: the package serves both.
 */
export function handlerModules(): string[] {
  // Synthesis is never run: constructing the service names its functions, nothing is bundled.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const modules = (['functionUrl', 'httpApi'] as const).flatMap((entryPoint) => {
    const service = new SluiceService(new Stack(app, `Modules-${entryPoint}`), 'Sluice', { entryPoint });
    return [...service.functions.values()].map((fn) => fn.handlerModule);
  });
  return [...new Set(modules)].sort();
}

export async function prebuildFunctions(root: string, outDir: string): Promise<{ modules: string[]; bytes: number }> {
  const modules = handlerModules();
  const [name, extension] = BUNDLE_FILE.split('.'); // index, mjs
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(modules.map((module) => [join(module, name ?? 'index'), join(root, 'functions', `${module}.ts`)])),
    outdir: outDir,
    outExtension: { '.js': `.${extension}` },
    bundle: true,
    target: esbuildTarget(DEFAULT_RUNTIME),
    format: lambdaBundling.format,
    platform: lambdaBundling.platform,
    mainFields: [...lambdaBundling.mainFields],
    minify: lambdaBundling.minify,
    keepNames: lambdaBundling.keepNames,
    sourcemap: lambdaBundling.sourcemap,
    sourcesContent: lambdaBundling.sourcesContent,
    banner: { js: lambdaBundling.banner },
    metafile: true,
    logLevel: 'warning',
  });
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  return { modules, bytes };
}
