/**
 * `npm run build:packages`: builds the published packages from this repository's sources,
 * into packages/<name>/dist, from their entry points only (internal moves change nothing):
 *
 * - `@sluice/client`: lib/client/index.ts → ESM bundle + declarations (zod-derived types flattened);
 * - `@sluice/cli`: bin/sluice.ts → one executable ESM file (the client bundled in), and the web
 *   console's files in dist/console/ for `sluice console` (`console/assets.prebuilt.ts` replaces
 *   `console/assets.ts`, so the CLI needs no esbuild);
 * - `@sluice/cdk`: cdk/index.ts → ESM bundle + declarations, and every function's code
 *   prebuilt into dist/lambda/ (`cdk/function-code.prebuilt.ts` replaces `function-code.ts`).
 *
 * `npm pack --workspaces` then packs them (see docs/packaging.md).
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildConsoleSources } from '../../console/build.js';
import { bundle } from './bundle.js';
import { emitDeclarations } from './declarations.js';
import { prebuildFunctions } from './lambda.js';
import { checkManifest, importable, type Manifest } from './manifests.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));

export const PACKAGE_DIRS = { client: 'packages/client', cli: 'packages/cli', cdk: 'packages/cdk' } as const;

export interface BuildReport {
  /** Bytes of each bundle written. */
  bytes: Record<string, number>;
  /** The handler modules prebuilt into the construct package. */
  functions: string[];
  /** How long the declarations took, and the whole build (the bundles are made meanwhile). */
  seconds: { declarations: number; total: number };
}

/** The `types` file a manifest's `exports['.']` names must have been written. */
function checkTypesExist(dir: string, manifest: Manifest): void {
  const entry = manifest.exports?.['.'];
  const types = typeof entry === 'object' ? entry.types : undefined;
  if (!types || !existsSync(join(root, dir, types))) throw new Error(`${dir}: exports['.'].types (${types}) was not written`);
}

/** The web console's page, script and style for `sluice console` from an installed CLI. */
async function writeConsole(dir: string): Promise<{ bytes: number }> {
  const sources = await buildConsoleSources();
  mkdirSync(dir, { recursive: true });
  const files: Array<[string, string]> = [['index.html', sources.html], ['app.js', sources.js], ['app.css', sources.css]];
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
  return { bytes: files.reduce((sum, [, text]) => sum + Buffer.byteLength(text), 0) };
}

export async function buildPackages(): Promise<BuildReport> {
  const started = performance.now();
  const manifests = Object.fromEntries(Object.entries(PACKAGE_DIRS).map(([key, dir]) => [key, checkManifest(root, dir)])) as Record<
    keyof typeof PACKAGE_DIRS,
    Manifest
  >;
  for (const dir of Object.values(PACKAGE_DIRS)) {
    rmSync(join(root, dir, 'dist'), { recursive: true, force: true });
    copyFileSync(join(root, 'LICENSE'), join(root, dir, 'LICENSE'));
  }
  const dist = (key: keyof typeof PACKAGE_DIRS, ...path: string[]) => join(root, PACKAGE_DIRS[key], 'dist', ...path);
  // Nothing the server runs belongs in the client or the CLI; zod only describes the SDK's types.
  const serverOnly = ['functions/', 'local/', 'lib/adapters/', 'lib/services/', 'node_modules/zod/'];

  // esbuild works in a process of its own: the bundles build while the compiler (synchronous,
  // in this process) emits the declarations.
  const bundles = Promise.all([
    bundle(root, { entry: 'lib/client/index.ts', outfile: dist('client', 'index.js'), externals: importable(manifests.client), forbiddenInputs: serverOnly }),
    bundle(root, {
      entry: 'bin/sluice.ts',
      outfile: dist('cli', 'sluice.js'),
      externals: importable(manifests.cli),
      executable: true,
      replace: { 'console/assets.ts': 'console/assets.prebuilt.ts' },
      forbiddenInputs: [...serverOnly, 'console/build.ts', 'console/app/'],
    }),
    writeConsole(dist('cli', 'console')),
    bundle(root, {
      entry: 'cdk/index.ts',
      outfile: dist('cdk', 'index.js'),
      externals: importable(manifests.cdk),
      replace: { 'cdk/function-code.ts': 'cdk/function-code.prebuilt.ts' },
      forbiddenInputs: ['cdk/function-code.ts'],
    }),
    prebuildFunctions(root, dist('cdk', 'lambda')),
  ]);
  await new Promise((resolve) => setImmediate(resolve));
  emitDeclarations(root, [
    {
      entry: 'lib/client/index.ts',
      outDir: dist('client'),
      allowedModules: importable(manifests.client),
      flatten: { file: 'lib/client/types.ts', insideDir: 'lib/client' },
    },
    { entry: 'cdk/index.ts', outDir: dist('cdk'), allowedModules: importable(manifests.cdk) },
  ]);
  const declared = performance.now();
  const [client, cli, consoleFiles, cdk, lambda] = await bundles;
  checkTypesExist(PACKAGE_DIRS.client, manifests.client);
  checkTypesExist(PACKAGE_DIRS.cdk, manifests.cdk);

  return {
    bytes: {
      'client/dist/index.js': client.bytes,
      'cli/dist/sluice.js': cli.bytes,
      'cli/dist/console': consoleFiles.bytes,
      'cdk/dist/index.js': cdk.bytes, 'cdk/dist/lambda': lambda.bytes },
    functions: lambda.modules,
    seconds: { declarations: (declared - started) / 1000, total: (performance.now() - started) / 1000 },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const report = await buildPackages();
  for (const [file, bytes] of Object.entries(report.bytes)) console.log(`${file}: ${(bytes / 1024).toFixed(1)} KiB`);
  console.log(
    `${report.functions.length} functions prebuilt; built in ${report.seconds.total.toFixed(1)} s (declarations ${report.seconds.declarations.toFixed(1)} s)`,
  );
}
