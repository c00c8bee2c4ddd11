/** What every `sluice` command runs with: a client for the global options, and where it prints. */
import type { Command } from 'commander';
// The client modules directly, not the package index: a command starts faster without the consumer and checker.
import { SluiceClient, type AuthMode, type SluiceClientOptions } from '../../lib/client/client.js';
import { createOut, type Out } from './output.js';

/** The options `sluice` takes before its command. */
export interface GlobalOptions {
  endpoint: string;
  /** Where receives go (`--receive-endpoint`), when not `endpoint`. */
  receiveEndpoint?: string;
  token?: string;
  json?: boolean;
  auth: AuthMode;
  region?: string;
  /** Seconds one request may take (a long poll adds its wait). */
  timeout: number;
}

export interface CommandContext {
  client: SluiceClient;
  out: Out;
}

/**
 * A command's action with its context first: commander calls an action with the command's
 * arguments, its options and the command itself; `action` gets the context made from the
 * command, then the arguments and options.
 */
export function withContext<A extends unknown[]>(action: (context: CommandContext, ...args: A) => Promise<void>) {
  return async (...args: unknown[]): Promise<void> => action(contextOf(args[args.length - 1] as Command), ...(args.slice(0, -1) as A));
}

/** The client for the global options, and the output they ask for. */
function contextOf(command: Command): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const client = new SluiceClient({ ...connectionOptions(options), retry: { maxAttempts: 3 } });
  return { client, out: createOut(Boolean(options.json)) };
}

/** Where and how to reach Sluice, from the global options (also `sluice console`'s transport). */
export function connectionOptions(options: GlobalOptions): SluiceClientOptions {
  return {
    endpoint: options.endpoint,
    receiveEndpoint: options.receiveEndpoint || undefined,
    token: options.token || undefined,
    auth: options.auth,
    region: options.region || undefined,
    timeoutMs: options.timeout * 1000,
  };
}

/** Every item of a paged listing (`client.iterateTopics()`), in order. */
export async function gather<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Ctrl-C aborts the running request: a clean exit for `tail`, `receive --wait`. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  process.once('SIGTERM', () => controller.abort(new Error('terminated')));
  return controller.signal;
}
