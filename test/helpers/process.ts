/** Runs `npm start`'s entry point as a real child process (for restart and crash tests). */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../local/dynamo.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface RuntimeProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnRuntime(options: {
  endpoint: string;
  table: string;
  token: string;
  port?: number;
  /** Extra environment for the child (e.g. SLUICE_CHECKBACK_EVERY_SECONDS, SLUICE_SECRETS_KEY, POWERTOOLS_LOG_LEVEL). */
  env?: Record<string, string>;
}): Promise<RuntimeProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DYNAMODB_ENDPOINT: options.endpoint,
      SLUICE_TABLE_NAME: options.table,
      SLUICE_API_TOKEN: options.token,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = Date.now();
  while (!output.includes('listening on')) {
    if (child.exitCode !== null) throw new Error(`runtime exited (${child.exitCode}):\n${output}`);
    if (Date.now() - started > 60_000) throw new Error(`runtime did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    kill: (signal = 'SIGKILL') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
