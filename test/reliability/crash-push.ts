/**
 * The push part of the crash test (issue 15 "Done when": a restart of the local runtime in the
 * middle of pushing loses nothing). A push group `g-push` subscribes to a standard topic
 * `push-std` and a FIFO topic `push-fifo` (serialized, many shards); its endpoint is a real HTTP
 * server in the test process that answers after a short random delay, 500 to a few requests
 * (released, retried after the group's 1 s back-off) and 204 to the rest. The runtime is
 * SIGKILLed meanwhile, so requests are cut off, leases are left behind and retry jobs are lost.
 *
 * Checked:
 * - every acknowledged send reaches the endpoint at least once, under the messageId it was
 *   acknowledged with, and nothing else does;
 * - per FIFO shard, the first deliveries of its messages arrive in sequence order
 *   (a redelivery after a crash may repeat earlier messages, never overtake them);
 * - every request's Standard Webhooks signature verifies with the group's secret
 *   (checked when it arrives: the scheme rejects timestamps older than 5 minutes);
 * - at the end nothing is in flight: the group's committed count equals the acknowledged
 *   sends, with backlog, inFlight and pending 0 and nothing dead-lettered.
 */
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { pushEndpoint, type PushEndpoint } from '../helpers/push-endpoint.js';
import { paced as pacedOver, sendUntilAccepted, sleep, type BatchEntry, type Http } from './support.js';

const GROUP = 'g-push';

export function pushWorkload(http: Http, random: { next(): number; int(min: number, max: number): number }, sizes: { std: number; fifo: number; shards: number; produceSeconds: number }) {
  /** body → the messageId its send was acknowledged with. */
  const acked = new Map<string, { topic: string; messageId: string }>();
  /** messageId → its first arrival: request index, shard, sequence. */
  const firstSeen = new Map<string, { request: number; shard: string | null; sequence: number | null }>();
  const unverified: string[] = [];
  let failedOnPurpose = 0;
  let endpoint: PushEndpoint | undefined;
  let verifier: Webhook | undefined;

  const sendAll = (topic: string, entries: BatchEntry[]) =>
    sendUntilAccepted(http, topic, entries, (entry, messageId) => acked.set(entry.body, { topic, messageId }), 200);
  const paced = (batches: number, send: (b: number) => Promise<void>) => pacedOver(batches, sizes.produceSeconds, send);

  return {
    async setup(setup: (method: string, path: string, body: unknown) => Promise<{ body: any }>) {
      endpoint = await pushEndpoint();
      await setup('PUT', '/v1/topics/push-std', { type: 'standard' });
      await setup('PUT', '/v1/topics/push-fifo', { type: 'fifo' });
      const created = await setup('PUT', `/v1/groups/${GROUP}`, {
        subscriptions: [{ topic: 'push-std' }, { topic: 'push-fifo' }],
        deliveryMode: 'serialized',
        maxDeliveries: 1000,
        retryPolicy: { initialSeconds: 1, multiplier: 1, maxSeconds: 1 },
        push: { url: endpoint.url, batchSize: 5, timeoutSeconds: 2, maxConcurrency: 4 },
      });
      verifier = new Webhook(created.body.signingSecret as string);
      const ep = endpoint;
      ep.answer = async (request) => {
        try {
          verifier!.verify(request.body, request.headers as Record<string, string>);
        } catch (error) {
          unverified.push(`${request.headers['webhook-id']}: ${(error as Error).message}`);
        }
        const index = ep.requests.indexOf(request);
        for (const m of request.messages) if (!firstSeen.has(m.messageId)) firstSeen.set(m.messageId, { request: index, shard: m.shardKey, sequence: m.sequence });
        // Some requests are still open when a SIGKILL lands; a few fail and go the retry way.
        await sleep(random.int(0, 40));
        if (random.next() < 0.05) {
          failedOnPurpose++;
          return { status: 500, body: { error: 'failing on purpose' } };
        }
        return { status: 204 };
      };
    },

    /** One producer per topic (one writer keeps each shard's send order), 10 per batch. */
    async produce() {
      await Promise.all([
        paced(Math.ceil(sizes.std / 10), (b) => sendAll('push-std', Array.from({ length: 10 }, (_, i) => b * 10 + i).filter((i) => i < sizes.std).map((i) => ({ body: `ps-${i}` })))),
        paced(Math.ceil(sizes.fifo / 10), (b) =>
          sendAll('push-fifo', Array.from({ length: 10 }, (_, i) => b * 10 + i).filter((i) => i < sizes.fifo).map((i) => ({ body: `pf-${i}`, shardKey: `p${i % sizes.shards}` }))),
        ),
      ]);
    },

    /** Whether the push group has committed every acknowledged send and holds nothing. */
    async settled(): Promise<boolean> {
      const stats = (await http.call('GET', `/v1/groups/${GROUP}`)).body;
      return stats.committed + stats.deadLettered >= sizes.std + sizes.fifo && stats.backlog === 0 && stats.inFlight === 0 && stats.pending === 0;
    },

    /** One line for the settle loop's progress log. */
    async progress(): Promise<string> {
      const stats = (await http.call('GET', `/v1/groups/${GROUP}`)).body;
      return `${GROUP} ${stats.committed + stats.deadLettered}/${sizes.std + sizes.fifo} (in flight ${stats.inFlight}, backlog ${stats.backlog}, requests ${endpoint?.requests.length ?? 0})`;
    },

    /** The invariants (see the file comment); returns figures for the report. */
    async check() {
      const requests = endpoint!.requests;
      const bodies = [...acked.keys()];
      expect(bodies.length, 'push: every send acknowledged').toBe(sizes.std + sizes.fifo);
      const delivered = new Map<string, { body: string; count: number }>();
      for (const r of requests) for (const m of r.messages) delivered.set(m.messageId, { body: m.body, count: (delivered.get(m.messageId)?.count ?? 0) + 1 });
      const missing = bodies.filter((b) => !delivered.has(acked.get(b)!.messageId));
      expect(missing, 'push: acknowledged but never pushed').toEqual([]);
      const ackedIds = new Set([...acked.values()].map((a) => a.messageId));
      const unexpected = [...delivered].filter(([id, d]) => !ackedIds.has(id) || acked.get(d.body)?.messageId !== id).map(([id, d]) => `${d.body} as ${id}`);
      expect(unexpected, 'push: pushed but not acknowledged as sent (or under another messageId)').toEqual([]);
      expect(unverified, 'push: signatures that do not verify').toEqual([]);

      // FIFO: per shard, first deliveries in sequence order (request order, then order within a request).
      const orderBroken: string[] = [];
      const lastFirst = new Map<string, number>();
      const firsts = [...firstSeen.values()].filter((f) => f.shard !== null && f.sequence !== null);
      for (const f of firsts) {
        const before = lastFirst.get(f.shard!);
        if (before !== undefined && f.sequence! <= before) orderBroken.push(`${f.shard}: #${f.sequence} first pushed after #${before}`);
        lastFirst.set(f.shard!, f.sequence!);
      }
      expect(orderBroken, 'push: FIFO order of first deliveries per shard').toEqual([]);

      const stats = (await http.call('GET', `/v1/groups/${GROUP}`)).body;
      expect(stats, 'push: nothing left in flight').toMatchObject({ backlog: 0, inFlight: 0, pending: 0, deadLettered: 0, committed: sizes.std + sizes.fifo });
      const counts = [...delivered.values()].map((d) => d.count);
      return {
        messages: bodies.length,
        requests: requests.length,
        failedOnPurpose,
        pushedMoreThanOnce: counts.filter((c) => c > 1).length,
        maxPushesOfOne: Math.max(0, ...counts),
        fifoShards: lastFirst.size,
      };
    },

    async close() {
      await endpoint?.close();
    },
  };
}
