/**
 * One ESM file per package entry (`dist/index.js`, the CLI's `dist/sluice.js`), bundled by
 * esbuild from this repository's sources, so that internal moves never change what a
 * package exports. A package's dependencies and peers stay imports; everything else is
 * bundled. The bundle must import exactly the modules the package declares: an undeclared
 * one would fail on a user's machine, an unused declaration is dead weight.
 */
import { chmodSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { relative } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { packageOf } from './manifests.js';

export interface BundleJob {
  entry: string;
  outfile: string;
  /** Bare module names the bundle may import: the package's dependencies and peers. */
  externals: readonly string[];
  /** Source modules replaced by others in this bundle (repository-relative paths). */
  replace?: Readonly<Record<string, string>>;
  /** An executable: `#!/usr/bin/env node`, mode 755. */
  executable?: boolean;
  /** Files or folders of the repository that must not end up in the bundle (relative path prefixes). */
  forbiddenInputs?: readonly string[];
}

/** Swaps a module for another wherever it is imported (the construct's prebuilt function code). */
function replaceModules(root: string, replace: Readonly<Record<string, string>>): Plugin {
  return {
    name: 'replace-modules',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^\./ }, async (args) => {
        if (args.pluginData === 'replace-modules') return undefined;
        const resolved = await pluginBuild.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'replace-modules' });
        const substitute = replace[relative(root, resolved.path)];
        return substitute ? { path: `${root}/${substitute}` } : resolved;
      });
    },
  };
}

export async function bundle(root: string, job: BundleJob): Promise<{ bytes: number }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [job.entry],
    outfile: job.outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Dependencies and peers (with their subpaths: `aws-cdk-lib/aws-lambda`) stay imports.
    external: job.externals.flatMap((name) => [name, `${name}/*`]),
    plugins: job.replace ? [replaceModules(root, job.replace)] : [],
    ...(job.executable ? { banner: { js: '#!/usr/bin/env node' } } : {}),
    metafile: true,
    logLevel: 'warning',
  });
  if (job.executable) chmodSync(job.outfile, 0o755);

  const [output] = Object.values(result.metafile.outputs);
  if (!output) throw new Error(`esbuild wrote no output for ${job.entry}`);
  const imported = new Set(output.imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => packageOf(i.path)));
  const undeclared = [...imported].filter((name) => !job.externals.includes(name));
  const unused = job.externals.filter((name) => !imported.has(name));
  if (undeclared.length || unused.length) {
    throw new Error(`${job.entry}: the bundle imports ${[...imported].join(', ') || 'nothing'}; undeclared: ${undeclared.join(', ') || '-'}; declared but unused: ${unused.join(', ') || '-'}`);
  }
  const forbidden = Object.keys(result.metafile.inputs).filter((input) => job.forbiddenInputs?.some((prefix) => input.startsWith(prefix)));
  if (forbidden.length) throw new Error(`${job.entry}: the bundle must not contain ${forbidden.join(', ')}`);
  return { bytes: output.bytes };
}
