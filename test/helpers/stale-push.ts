/**
 * Two push workers of one group for the stale-lease tests: the first answers each request after
 * 1.9 s of the fake clock (within a 2 s timeout) and, once the claim's leases have passed, lets the
 * second drain the group once meanwhile — as another push job on another worker would on AWS.
 */
import { cryptoRandom } from '../../lib/ports/random.js';
import { Pusher, pushLeaseMs } from '../../lib/services/pusher.js';
import { testSecrets, type Harness } from './stores.js';
import { RecordingPushQueue } from './push-endpoint.js';

export interface StalePushRun {
  /** Bodies in the order the endpoint got them (both workers). */
  seen: string[];
  /** Whether the second worker drained meanwhile. */
  drainedMeanwhile: () => boolean;
  /** Drains the group with the slow worker. */
  drain: () => Promise<void>;
}

export function stalePushRun(h: Harness, group: string, timeoutSeconds = 2): StalePushRun {
  const seen: string[] = [];
  // The claim's leases end no sooner than this (+ the 1 s back-off every claim adds).
  const leaseEnd = h.clock.now() + pushLeaseMs({ timeoutSeconds }) + 1000;
  let second: Pusher | undefined;
  let drained = false;
  const client = (slow: boolean) => ({
    post: async (_url: string, _headers: Record<string, string>, body: string) => {
      seen.push(...(JSON.parse(body) as { data: { messages: Array<{ body: string }> } }).data.messages.map((m) => m.body));
      if (slow) {
        h.clock.advance(timeoutSeconds * 1000 - 100);
        if (h.clock.now() > leaseEnd && !drained) {
          drained = true;
          await second?.drain(group);
        }
      }
      return { status: 200, body: '' };
    },
    vet: async () => undefined,
  });
  const first = new Pusher(h.stores, h.queue, client(true), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom);
  second = new Pusher(h.stores, h.queue, client(false), testSecrets, new RecordingPushQueue(), h.clock, cryptoRandom);
  return { seen, drainedMeanwhile: () => drained, drain: () => first.drain(group) };
}
