/**
 * The operations part of the crash test (issue 17 "Done when"): seeks, redrives and a purge
 * made while the runtime is SIGKILLed and restarted, on topics and groups of their own so that
 * the main workload's exactly-once counts stay exact.
 *
 * - `ops-fifo` (FIFO, 16 shards, one producer) read by `g-seek` (concurrent): sought to earliest
 *   and to a time during production, and to earliest once more at the end.
 *   Checked: every acknowledged message is delivered and committed after the last seek began
 *   (nothing lost); a message whose commit was acknowledged is delivered again only when a seek
 *   overlapped the time between its commit and that delivery (nothing committed comes back
 *   otherwise); per shard, a first delivery (deliveryCount 1) of a sequence number at or below
 *   one delivered before is always across a seek (order holds from each new position).
 * - `ops-std` read by `g-redrive` (maxDeliveries 2): `fail-*` messages are given back until they
 *   are dead-lettered, redrives run during production and again at the end, when the handler
 *   "is fixed". Checked: every message committed exactly once on the server, nothing left
 *   dead-lettered, and a message comes back with deliveryCount 1 at most once per dead-letter
 *   copy it has (found by key in `g-redrive-dlq`): each redrive brings a dead letter back once.
 * - `ops-purge` read by `g-purge`, purged once during production. Checked: no message
 *   acknowledged before the purge began is delivered by a receive that started after it
 *   answered; every message whose send started after the purge answered is delivered and committed.
 *
 * Every operation attempt (also one cut off by a SIGKILL) is logged with when it started and
 * ended: the checks count a cut-off attempt as an operation that may have taken effect.
 */
import { expect } from 'vitest';
import { ConnectionError, paced as pacedOver, sendUntilAccepted, sleep, type BatchEntry, type Http, type Reply } from './support.js';

interface Attempt {
  start: number;
  end: number;
  ok: boolean;
}

interface OpsDelivery {
  id: string;
  receipt: string;
  shard: string | null;
  seq: number | null;
  deliveryCount: number;
  /** When the receive request was sent and when its answer arrived. */
  sentAt: number;
  at: number;
}

interface OpsLog {
  deliveries: OpsDelivery[];
  /** receipt → when its acknowledged commit request was sent. */
  ackedCommit: Map<string, number>;
}

const FIFO_SHARDS = 16;

export function operationsWorkload(http: Http, random: { next(): number; int(min: number, max: number): number }, sizes: { fifoPerShard: number; std: number; purge: number; produceSeconds: number; visibility: number }) {
  const logs = new Map<string, OpsLog>(['g-seek', 'g-redrive', 'g-purge'].map((g) => [g, { deliveries: [], ackedCommit: new Map() }]));
  /** id → first send attempt's start and the acknowledgement's arrival. */
  const sent = new Map<string, { topic: string; startedAt: number; ackedAt: number }>();
  const seeks: Attempt[] = [];
  const redrives: Array<Attempt & { redriven?: number }> = [];
  const purges: Attempt[] = [];
  let fixed = false; // g-redrive's handler fails `fail-*` messages until then
  let finalSeek: Attempt | undefined;

  /** One operation until it answers 200 (409 and the runtime being down are tried again); every attempt logged. */
  const operate = async (log: Attempt[], method: string, path: string, body: unknown): Promise<Reply> => {
    for (;;) {
      const start = Date.now();
      let reply: Reply | undefined;
      try {
        reply = await http.once(method, path, body, 60_000);
      } catch (error) {
        if (!(error instanceof ConnectionError)) throw error;
      }
      log.push({ start, end: Date.now(), ok: reply?.status === 200 });
      if (reply?.status === 200) return reply;
      if (reply && reply.status !== 409 && reply.status !== 429 && reply.status !== 503) {
        throw new Error(`${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`);
      }
      await sleep(200 + random.int(0, 300));
    }
  };

  const sendAll = (topic: string, entries: BatchEntry[]) => {
    const startedAt = Date.now();
    return sendUntilAccepted(http, topic, entries, (entry, _messageId, at) =>
      sent.set(entry.body, { topic, startedAt: sent.get(entry.body)?.startedAt ?? startedAt, ackedAt: at }),
    );
  };
  const paced = (batches: number, send: (b: number) => Promise<void>) => pacedOver(batches, sizes.produceSeconds, send);

  const ids = (topic: string) => [...sent].filter(([, s]) => s.topic === topic).map(([id]) => id);

  return {
    async setup(setup: (method: string, path: string, body: unknown) => Promise<unknown>) {
      await setup('PUT', '/v1/topics/ops-fifo', { type: 'fifo' });
      await setup('PUT', '/v1/topics/ops-std', { type: 'standard' });
      await setup('PUT', '/v1/topics/ops-purge', { type: 'standard' });
      const settings = { visibilityTimeoutSeconds: sizes.visibility };
      await setup('PUT', '/v1/groups/g-seek', { subscriptions: [{ topic: 'ops-fifo' }], deliveryMode: 'concurrent', maxDeliveries: 1000, ...settings });
      await setup('PUT', '/v1/groups/g-redrive', { subscriptions: [{ topic: 'ops-std' }], maxDeliveries: 2, ...settings });
      await setup('PUT', '/v1/groups/g-purge', { subscriptions: [{ topic: 'ops-purge' }], maxDeliveries: 1000, ...settings });
    },

    /** The three producers and, meanwhile, the operations (seeks, redrives, one purge). */
    async produce() {
      const producers = [
        paced(sizes.fifoPerShard, (b) => sendAll('ops-fifo', Array.from({ length: FIFO_SHARDS }, (_, s) => ({ body: `of-${b}-${s}`, shardKey: `o${s}` })))),
        paced(Math.ceil(sizes.std / 10), (b) =>
          sendAll('ops-std', Array.from({ length: 10 }, (_, i) => b * 10 + i).filter((i) => i < sizes.std).map((i) => {
            const body = i % 10 === 3 ? `fail-${i}` : `os-${i}`;
            return { body, keys: [body] };
          })),
        ),
        paced(Math.ceil(sizes.purge / 10), (b) => sendAll('ops-purge', Array.from({ length: 10 }, (_, i) => ({ body: `op-${b * 10 + i}` })))),
      ];
      const at = (fraction: number) => sleep(sizes.produceSeconds * 1000 * fraction + random.int(0, 1000));
      const operations = [
        at(0.3).then(() => operate(seeks, 'POST', '/v1/groups/g-seek/seek', { to: 'earliest' })),
        at(0.65).then(() => operate(seeks, 'POST', '/v1/groups/g-seek/seek', { to: new Date(Date.now() - 3000).toISOString() })),
        at(0.4).then(() => operate(redrives, 'POST', '/v1/groups/g-redrive/redrive', {})),
        at(0.8).then(() => operate(redrives, 'POST', '/v1/groups/g-redrive/redrive', {})),
        at(0.5).then(() => operate(purges, 'POST', '/v1/topics/ops-purge/purge', undefined)),
      ];
      await Promise.all([...producers, ...operations]);
    },

    /** The consumers: g-seek and g-purge commit everything; g-redrive gives `fail-*` back until fixed. */
    consumers(consume: (group: string, handle: (res: Reply) => Promise<void>) => Promise<void>): Array<Promise<void>> {
      const commit = async (group: string, got: OpsDelivery[]) => {
        const sentAt = Date.now();
        const res = await http.call('POST', `/v1/groups/${group}/commit`, { entries: got.map((d) => ({ receiptHandle: d.receipt })) }, { deadlineMs: 300_000 });
        expect(res.status, JSON.stringify(res.body).slice(0, 400)).toBe(200);
        for (const r of res.body.results as Array<{ receiptHandle: string; status?: string; error?: { code: string } }>) {
          if (r.status === 'committed') logs.get(group)!.ackedCommit.set(r.receiptHandle, sentAt);
          else if (r.error?.code !== 'ReceiptHandleExpired') throw new Error(`commit answered ${JSON.stringify(r)}`);
        }
      };
      const handler = (group: string) => async (res: Reply) => {
        const got: OpsDelivery[] = (res.body.messages as Array<Record<string, any>>).map((m) => ({
          id: m.body,
          receipt: m.receiptHandle,
          shard: m.shardKey,
          seq: m.sequence,
          deliveryCount: m.deliveryCount,
          sentAt: res.sentAt,
          at: res.at,
        }));
        logs.get(group)!.deliveries.push(...got);
        if (group === 'g-redrive' && !fixed) {
          for (const d of got.filter((d) => d.id.startsWith('fail-'))) {
            await http.call('POST', '/v1/groups/g-redrive/visibility', { receiptHandle: d.receipt, visibilityTimeoutSeconds: 0 });
          }
          const rest = got.filter((d) => !d.id.startsWith('fail-'));
          if (rest.length) await commit(group, rest);
          return;
        }
        if (got.length) await commit(group, got);
      };
      return [
        consume('g-seek', handler('g-seek')),
        consume('g-seek', handler('g-seek')),
        consume('g-redrive', handler('g-redrive')),
        consume('g-purge', handler('g-purge')),
      ];
    },

    /** After production and the crashes: the handler is fixed, and g-seek is sought to earliest once more. */
    async finish() {
      fixed = true;
      const before = seeks.length;
      await operate(seeks, 'POST', '/v1/groups/g-seek/seek', { to: 'earliest' });
      finalSeek = seeks.slice(before).find((a) => a.ok);
    },

    /** Whether every operations group is done (redriving again what is still dead-lettered). */
    async settled(): Promise<boolean> {
      if (!finalSeek) return false;
      const stats = Object.fromEntries(
        await Promise.all(['g-seek', 'g-redrive', 'g-purge'].map(async (g) => [g, (await http.call('GET', `/v1/groups/${g}`)).body] as const)),
      );
      if (stats['g-redrive'].deadLettered > 0) await operate(redrives, 'POST', '/v1/groups/g-redrive/redrive', {});
      const idle = (g: string) => stats[g].backlog === 0 && stats[g].inFlight === 0 && stats[g].pending === 0;
      const seekDone = ids('ops-fifo').every((id) => this.committedAfter('g-seek', id, finalSeek!.start));
      return idle('g-seek') && seekDone && idle('g-redrive') && stats['g-redrive'].deadLettered === 0 && stats['g-redrive'].committed === ids('ops-std').length && idle('g-purge');
    },

    /** Whether a delivery of `id` answered after `after` had its commit acknowledged. */
    committedAfter(group: string, id: string, after: number): boolean {
      const log = logs.get(group)!;
      return log.deliveries.some((d) => d.id === id && d.at > after && log.ackedCommit.has(d.receipt));
    },

    /** The invariants (see the file comment); returns figures for the report. */
    async check() {
      const report: Record<string, unknown> = {};
      // g-seek: nothing lost, nothing committed back without a seek, order from each position.
      const seekLog = logs.get('g-seek')!;
      const across = (from: number, to: number) => seeks.some((s) => s.end > from && s.start < to);
      const lost = ids('ops-fifo').filter((id) => !this.committedAfter('g-seek', id, finalSeek!.start));
      expect(lost, 'g-seek: acknowledged but not committed after the last seek').toEqual([]);
      const commitsOf = new Map<string, number[]>();
      for (const d of seekLog.deliveries) {
        const at = seekLog.ackedCommit.get(d.receipt);
        if (at !== undefined) commitsOf.set(d.id, [...(commitsOf.get(d.id) ?? []), at]);
      }
      const cameBack = seekLog.deliveries.filter((d) => (commitsOf.get(d.id) ?? []).some((c) => c < d.sentAt && !across(c, d.at))).map((d) => d.id);
      expect(cameBack, 'g-seek: committed, then delivered again without a seek between').toEqual([]);
      const orderBroken: string[] = [];
      const byShard = new Map<string, OpsDelivery[]>();
      for (const d of seekLog.deliveries) byShard.set(d.shard!, [...(byShard.get(d.shard!) ?? []), d]);
      for (const [shard, ds] of byShard) {
        for (const d of ds) {
          if (d.deliveryCount !== 1) continue;
          const earlier = ds.find((e) => e.at < d.sentAt && e.seq! >= d.seq! && !across(e.sentAt, d.at));
          if (earlier) orderBroken.push(`${shard}: #${d.seq} first delivered after #${earlier.seq}, no seek between`);
        }
      }
      expect(orderBroken, 'g-seek: order per shard').toEqual([]);
      report['g-seek'] = { messages: ids('ops-fifo').length, deliveries: seekLog.deliveries.length, seekAttempts: seeks.length, seeksCutOff: seeks.filter((s) => !s.ok).length };

      // g-redrive: everything committed once, nothing left dead-lettered, each redrive brings a dead letter back once.
      const redriveLog = logs.get('g-redrive')!;
      const stats = (await http.call('GET', '/v1/groups/g-redrive')).body;
      expect(stats, 'g-redrive').toMatchObject({ backlog: 0, inFlight: 0, pending: 0, deadLettered: 0, committed: ids('ops-std').length });
      const firstDeliveries = new Map<string, number>();
      for (const d of redriveLog.deliveries) if (d.deliveryCount === 1) firstDeliveries.set(d.id, (firstDeliveries.get(d.id) ?? 0) + 1);
      const backTooOften: string[] = [];
      let copies = 0;
      for (const [id, n] of firstDeliveries) {
        if (n <= 1 && !id.startsWith('fail-')) continue;
        const found = (await http.call('GET', `/v1/topics/g-redrive-dlq/messages?key=${encodeURIComponent(id)}`)).body.messages as unknown[];
        copies += found.length;
        if (n > 1 + found.length) backTooOften.push(`${id}: ${n} first deliveries, ${found.length} dead-letter copies`);
      }
      expect(backTooOften, 'g-redrive: a dead letter came back more than once per copy').toEqual([]);
      const committedTwice = [...new Set(redriveLog.deliveries.map((d) => d.id))].filter(
        (id) => new Set(redriveLog.deliveries.filter((d) => d.id === id && redriveLog.ackedCommit.has(d.receipt)).map((d) => d.receipt)).size > 1,
      );
      expect(committedTwice, 'g-redrive: committed twice').toEqual([]);
      const failIds = ids('ops-std').filter((id) => id.startsWith('fail-'));
      expect(failIds.filter((id) => !redriveLog.deliveries.some((d) => d.id === id && redriveLog.ackedCommit.has(d.receipt))), 'g-redrive: fail-* not committed').toEqual([]);
      report['g-redrive'] = { messages: ids('ops-std').length, failing: failIds.length, deadLetterCopies: copies, redriveAttempts: redrives.length, committed: stats.committed };

      // g-purge: nothing acknowledged before the purge delivered after it; everything sent after it delivered.
      const purgeLog = logs.get('g-purge')!;
      const purge = [...purges].reverse().find((p) => p.ok)!;
      expect(purge, 'the purge answered').toBeDefined();
      const resurrected = purgeLog.deliveries.filter((d) => d.sentAt > purge.end && sent.get(d.id)!.ackedAt < purge.start).map((d) => d.id);
      expect(resurrected, 'g-purge: purged messages delivered after the purge').toEqual([]);
      const later = ids('ops-purge').filter((id) => sent.get(id)!.startedAt > purge.end);
      const missing = later.filter((id) => !purgeLog.deliveries.some((d) => d.id === id && purgeLog.ackedCommit.has(d.receipt)));
      expect(missing, 'g-purge: sent after the purge but not committed').toEqual([]);
      report['g-purge'] = {
        messages: ids('ops-purge').length,
        ackedBeforePurge: ids('ops-purge').filter((id) => sent.get(id)!.ackedAt < purge.start).length,
        sentAfterPurge: later.length,
        purgeAttempts: purges.length,
      };
      return report;
    },
  };
}
