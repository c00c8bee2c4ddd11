/**
 * `.d.ts` files for a package: the TypeScript compiler emits declarations for the
 * package's entry point (with the zod-derived SDK types flattened, see
 * `flatten-types.ts`), and only the declarations reachable from the entry are kept.
 * Every module they import from outside must be one the package depends on (or a
 * Node.js built-in), so a user's type check never reaches for `zod` or this repository.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { flattenForeignTypes } from './flatten-types.js';
import { packageOf } from './manifests.js';

export interface DeclarationJob {
  /** The entry point, relative to the repository root (`lib/client/index.ts`). */
  entry: string;
  /** Where the declarations go; the entry becomes `<outDir>/index.d.ts`. */
  outDir: string;
  /** Bare module names the declarations may import (the package's dependencies and peers). */
  allowedModules: readonly string[];
  /** A module whose zod-derived aliases are flattened, and the package directory it belongs to. */
  flatten?: { file: string; insideDir: string };
}

/** The `.d.ts` a relative import of a declaration file points at (`./client.js` → `client.d.ts`). */
function declarationOf(fromFile: string, specifier: string, emitted: ReadonlyMap<string, string>): string {
  const base = resolve(dirname(fromFile), specifier).replace(/\.(m?js|ts)$/, '');
  for (const candidate of [`${base}.d.ts`, join(base, 'index.d.ts')]) if (emitted.has(candidate)) return candidate;
  throw new Error(`${fromFile} imports ${specifier}, for which no declaration was emitted`);
}

function compilerOptions(root: string, outDir: string): ts.CompilerOptions {
  const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  if (configFile.error) throw new Error(ts.flattenDiagnosticMessageText(configFile.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  return {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    rootDir: root,
    outDir,
  };
}

function failOn(diagnostics: readonly ts.Diagnostic[], what: string): void {
  if (diagnostics.length === 0) return;
  const text = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => '\n',
  });
  throw new Error(`${what}:\n${text}`);
}

/** Emits the declarations of every job in one compiler run, then writes each package's reachable set. */
export function emitDeclarations(root: string, jobs: readonly DeclarationJob[]): void {
  const virtualOut = join(root, '.declarations');
  const options = compilerOptions(root, virtualOut);
  const rootNames = jobs.map((job) => join(root, job.entry));
  // A small program of the flattened modules alone computes their types.
  const flattened = jobs.flatMap((job) => (job.flatten ? [{ file: join(root, job.flatten.file), insideDir: join(root, job.flatten.insideDir) }] : []));
  const original = ts.createProgram({ rootNames: flattened.map((f) => f.file), options });
  const replaced = new Map(flattened.map(({ file, insideDir }) => [file, flattenForeignTypes(original, file, insideDir)]));

  const host = ts.createCompilerHost(options);
  const { getSourceFile, readFile } = host;
  host.getSourceFile = (fileName, language, onError, shouldCreate) => {
    const text = replaced.get(resolve(fileName));
    return text === undefined ? getSourceFile.call(host, fileName, language, onError, shouldCreate) : ts.createSourceFile(fileName, text, language);
  };
  host.readFile = (fileName) => replaced.get(resolve(fileName)) ?? readFile.call(host, fileName);
  const program = ts.createProgram({ rootNames, options, host });

  // The flattened module must still fit every use the package makes of it.
  for (const job of jobs) {
    if (!job.flatten) continue;
    const inside = join(root, job.flatten.insideDir) + sep;
    const files = program.getSourceFiles().filter((f) => resolve(f.fileName).startsWith(inside));
    failOn(files.flatMap((f) => program.getSemanticDiagnostics(f)), `${job.entry}: the flattened types do not fit`);
  }

  const emitted = new Map<string, string>();
  const result = program.emit(undefined, (fileName, text) => emitted.set(resolve(fileName), text));
  failOn(result.diagnostics, 'declaration emit failed');

  for (const job of jobs) {
    const entry = join(virtualOut, job.entry.replace(/\.ts$/, '.d.ts'));
    if (!emitted.has(entry)) throw new Error(`no declaration for ${job.entry}`);
    const reachable = new Set<string>();
    const visit = (file: string) => {
      if (reachable.has(file)) return;
      reachable.add(file);
      const text = emitted.get(file) ?? '';
      const info = ts.preProcessFile(text, true, true);
      const specifiers = [
        ...info.importedFiles.map((f) => f.fileName),
        ...[...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? ''),
      ];
      for (const specifier of specifiers) {
        if (specifier.startsWith('.')) visit(declarationOf(file, specifier, emitted));
        else if (!isBuiltin(specifier) && !job.allowedModules.includes(packageOf(specifier))) {
          throw new Error(`${relative(virtualOut, file)} imports '${specifier}', which ${job.entry}'s package does not depend on`);
        }
      }
    };
    visit(entry);
    // Re-rooted at the directory that holds them all (usually the entry's own), so that
    // `index.d.ts` sits beside the bundled `index.js`.
    let base = dirname(entry);
    while ([...reachable].some((file) => relative(base, file).startsWith('..'))) base = dirname(base);
    for (const file of reachable) {
      const path = join(job.outDir, relative(base, file));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, emitted.get(file) ?? '');
    }
    if (base !== dirname(entry)) {
      const index = relative(base, entry).replace(/\.d\.ts$/, '.js');
      writeFileSync(join(job.outDir, 'index.d.ts'), `export * from './${index.split(sep).join('/')}';\n`);
    }
  }
}
