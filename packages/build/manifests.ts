/**
 * The published packages' manifests (packages/<name>/package.json), checked against the
 * repository's: every field a registry user relies on is there, and every dependency
 * range starts at the version this repository installs and tests (`^<root version>`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type: string; url: string; directory?: string };
  engines?: { node?: string };
  files?: string[];
  bin?: Record<string, string>;
  exports?: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The package a bare module specifier belongs to: `aws-cdk-lib/aws-lambda` → `aws-cdk-lib`, `@smithy/x/y` → `@smithy/x`. */
export const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** Dependencies and peers: what the package's code may import. */
export const importable = (manifest: Manifest) => [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];

export function checkManifest(root: string, dir: string): Manifest {
  const manifest = readManifest(join(root, dir));
  const rootManifest = readManifest(root);
  const problems: string[] = [];
  if (manifest.private) problems.push('is private');
  if (!manifest.version) problems.push('has no version');
  if (manifest.license !== rootManifest.license) problems.push(`license ${manifest.license} is not the repository's (${rootManifest.license})`);
  if (manifest.repository?.url !== rootManifest.repository?.url || manifest.repository?.directory !== dir) {
    problems.push(`repository must be ${rootManifest.repository?.url} with directory ${dir}`);
  }
  if (manifest.engines?.node !== rootManifest.engines?.node) problems.push(`engines.node must be ${rootManifest.engines?.node}`);
  if (!manifest.files?.length) problems.push('lists no files');
  if (!existsSync(join(root, dir, 'README.md'))) problems.push('has no README.md');
  if (manifest.devDependencies) problems.push('has devDependencies (the build uses the repository\'s)');
  const tested = { ...rootManifest.dependencies, ...rootManifest.devDependencies };
  for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
    if (range !== `^${tested[name]}`) problems.push(`${name}@${range} is not ^${tested[name]} (the version the repository tests)`);
  }
  if (problems.length) throw new Error(`${dir}/package.json: ${problems.join('; ')}`);
  return manifest;
}
