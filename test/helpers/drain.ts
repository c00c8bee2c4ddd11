/**
 * Receives and commits a group's messages the way the seek and purge tests read what a group gets:
 * the bodies, in the order they came.
 */
import type { Harness } from './stores.js';

/**
 * Until a receive comes back empty (at most 20 receives: more throws); with `everyMs`, 6 receives
 * with the fake clock advanced by it after each (a sequenced shard's holes fill as time passes).
 */
export async function drainBodies(h: Harness, group: string, options: { everyMs?: number } = {}): Promise<string[]> {
  const out: string[] = [];
  const rounds = options.everyMs === undefined ? 20 : 6;
  for (let round = 0; round < rounds; round++) {
    const got = await h.queue.receive(group, { maxMessages: 100, waitSeconds: 0 });
    if (got.length === 0 && options.everyMs === undefined) return out;
    out.push(...got.map((m) => m.body));
    if (got.length > 0) await h.queue.commit(group, got.map((m) => m.receiptHandle));
    if (options.everyMs !== undefined) h.clock.advance(options.everyMs);
  }
  if (options.everyMs === undefined) throw new Error(`${group} did not drain in ${rounds} receives`);
  return out;
}
