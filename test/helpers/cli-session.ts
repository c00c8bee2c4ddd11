/**
 * One local runtime per e2e file, with the `sluice` CLI (run in this process, test/helpers/cli.ts)
 * and the SDK pointed at it. Call `cliSession()` at the top level of the file: it registers the
 * beforeAll that starts the runtime and the afterAll that stops it.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { SluiceClient } from '../../lib/client/index.js';
import { runCli, type CliRun } from './cli.js';
import { TOKEN, startRuntime } from './local.js';

export interface CliSession {
  /** The runtime and an SDK client on it; reading them before beforeAll ran throws. */
  readonly runtime: LocalRuntime;
  readonly client: SluiceClient;
  /** Runs `sluice --endpoint <runtime> --token <token> …args`. */
  sluice(...args: string[]): Promise<CliRun>;
  /** A run that succeeded with nothing on stderr: its stdout. */
  ok(run: CliRun): string;
  /** Runs `sluice --json …args`, which must succeed, and parses its stdout. */
  json<T = any>(...args: string[]): Promise<T>;
}

export function cliSession(): CliSession {
  let runtime: LocalRuntime | undefined;
  let client: SluiceClient | undefined;
  beforeAll(async () => {
    runtime = await startRuntime();
    client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
  });
  afterAll(async () => runtime?.stop());
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The local runtime is not started: call cliSession() at the top level of the test file.');
    return value;
  };
  const session: CliSession = {
    get runtime() {
      return started(runtime);
    },
    get client() {
      return started(client);
    },
    sluice: (...args) => runCli(['--endpoint', started(runtime).url, '--token', TOKEN, ...args]),
    ok: (run) => {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      return run.stdout;
    },
    json: async (...args) => JSON.parse(session.ok(await session.sluice('--json', ...args))),
  };
  return session;
}
