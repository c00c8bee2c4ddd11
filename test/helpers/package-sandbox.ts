/**
 * A user's machine, as far as the published packages can tell: the packages are built and
 * packed from this repository (`npm run build:packages`, `npm pack --workspaces`), then
 * installed with npm from the tarballs — their dependencies from the registry, through
 * npm's cache — into a temporary folder outside the repository, where nothing resolves
 * from this repository's node_modules.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface PackedTarball {
  name: string;
  filename: string;
  /** Bytes of the tarball. */
  size: number;
  unpackedSize: number;
  entryCount: number;
}

export interface Sandbox {
  /** The folder the packages are installed in (it has its own package.json, `"type": "module"`). */
  dir: string;
  tarballs: PackedTarball[];
  /** Seconds per step: build, pack, install. */
  seconds: Record<string, number>;
  remove(): void;
}

/**
 * The environment of a command run as a user would run it. `npm test` exports npm's
 * per-script variables (`npm_config_local_prefix`, `npm_package_*`, `INIT_CWD`, …), which
 * would make a child npm treat this repository as its project: they are dropped. npm's
 * own settings (cache, registry, certificates) are kept.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_config_call$|npm_command$|INIT_CWD$|NODE_PATH$|NODE_OPTIONS$|VITEST)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to its end (or kills it after `timeoutMs`), collecting its output. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number; input?: string },
): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: options.timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = performance.now() - started;
      if (signal) stderr += `\n(killed by ${signal} after ${Math.round(ms)} ms; limit ${options.timeoutMs} ms)`;
      resolve({ code, stdout, stderr, ms });
    });
    child.stdin.end(options.input ?? '');
  });
}

async function mustRun(command: string, args: readonly string[], options: Parameters<typeof run>[2]): Promise<Run> {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
  return result;
}

/** Node resolves bare imports through every ancestor's node_modules: none may have one. */
function assertIsolated(dir: string): void {
  for (let at = dirname(dir); ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules'))) throw new Error(`${at}/node_modules would be visible from ${dir}: the sandbox is not isolated`);
    if (dirname(at) === at) return;
  }
}

/**
 * Builds, packs and installs the packages, with `extras` (`name@version`) installed beside
 * them in the same `npm install`.
 */
export async function createSandbox(extras: readonly string[]): Promise<Sandbox> {
  const base = mkdtempSync(join(tmpdir(), 'sluice-packages-'));
  const seconds: Record<string, number> = {};
  try {
    const tarballDir = join(base, 'tarballs');
    const dir = join(base, 'app');
    mkdirSync(tarballDir);
    mkdirSync(dir);
    assertIsolated(dir);

    seconds.build = (await mustRun('npm', ['run', 'build:packages'], { cwd: root, timeoutMs: 8 * 60_000 })).ms / 1000;
    const pack = await mustRun('npm', ['pack', '--workspaces', '--pack-destination', tarballDir, '--json'], { cwd: root, timeoutMs: 3 * 60_000 });
    seconds.pack = pack.ms / 1000;
    const tarballs = JSON.parse(pack.stdout) as PackedTarball[];

    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'sluice-user', private: true, type: 'module' }, null, 2)}\n`);
    const install = await mustRun(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs.map((t) => join(tarballDir, t.filename)), ...extras],
      { cwd: dir, env: userEnv(), timeoutMs: 6 * 60_000 },
    );
    seconds.install = install.ms / 1000;
    return { dir, tarballs, seconds, remove: () => rmSync(base, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
}

/** `name@version` of a package this repository installs (so the sandbox gets the tested version). */
export function tested(name: string): string {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const version = manifest.dependencies[name] ?? manifest.devDependencies[name];
  if (!version) throw new Error(`${name} is no dependency of this repository`);
  return `${name}@${version}`;
}
