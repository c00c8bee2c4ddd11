/**
 * An AWS-like round trip for DynamoDB Local: a client middleware that holds every attempt for a
 * random 5–10 ms (half before it is sent, half after the answer), so that concurrent appends race
 * on a stream head as they would against DynamoDB in a region, where a writer's read and its put
 * are milliseconds apart. On only while the scale rows run (bench/scale.ts).
 */
import { sleep } from './stats.js';

export class RoundTrip {
  /** Off by default: the other phases measure DynamoDB Local as it is. */
  enabled = false;

  constructor(
    readonly minMs: number,
    readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {
    if (!(minMs >= 0 && maxMs >= minMs)) throw new Error('RoundTrip needs 0 ≤ minMs ≤ maxMs');
  }

  /** The mean delay added per call. */
  get meanMs(): number {
    return (this.minMs + this.maxMs) / 2;
  }

  /** Adds the delay to every attempt of a client's calls (below the SDK's retries, so each attempt pays it). */
  install(client: { middlewareStack: { add: (...args: any[]) => void } }): void {
    client.middlewareStack.add(
      (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
        if (!this.enabled) return next(args);
        const half = (this.minMs + this.random() * (this.maxMs - this.minMs)) / 2;
        await sleep(half);
        try {
          return await next(args);
        } finally {
          await sleep(half);
        }
      },
      { step: 'finalizeRequest', priority: 'low', name: 'sluiceBenchRoundTrip', override: true },
    );
  }
}
