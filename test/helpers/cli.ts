/**
 * Runs the `sluice` program in this process (bin/cli/program.ts `main`), capturing what it writes
 * to stdout and stderr and the exit code it returns. Milliseconds per run instead of the second a
 * subprocess costs (test/e2e/cli.test.ts runs the real binary). Standard input is never read:
 * give bodies as arguments or files.
 */
import { main } from '../../bin/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

type Write = typeof process.stdout.write;

/** Runs `sluice …args` (pass `--endpoint` and `--token` explicitly: the environment is not read for them). */
export async function runCli(args: string[]): Promise<CliRun> {
  const captured = { stdout: '', stderr: '' };
  const capture = (stream: NodeJS.WriteStream, into: 'stdout' | 'stderr') => {
    const original = stream.write;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      captured[into] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const done = rest.find((arg): arg is () => void => typeof arg === 'function');
      done?.();
      return true;
    }) as Write;
    return () => void (stream.write = original);
  };
  const listeners = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  const restore = [capture(process.stdout, 'stdout'), capture(process.stderr, 'stderr')];
  try {
    const code = await main(['node', 'sluice', ...args]);
    return { code, ...captured };
  } finally {
    for (const undo of restore) undo();
    process.exitCode = exitCode;
    // `receive` and `tail` listen for Ctrl-C; a test process must keep its own signal handling.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const listener of process.listeners(signal)) if (!listeners[signal].includes(listener)) process.removeListener(signal, listener);
    }
  }
}

/** ISO timestamps become `<time>`, so that a whole output can be compared. */
export const timeless = (text: string) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>');
