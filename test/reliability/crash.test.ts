/**
 * Crash test (issue 9): a mixed workload against a real runtime process that
 * is SIGKILLed at random moments and restarted, while producers retry with
 * dedupIds and consumers keep receiving and committing. Afterwards every
 * invariant of SPEC §6 is checked from what the clients saw and what the
 * server reports.
 *
 * Workload (full / ci): 10,000 / 2,000 messages —
 *   standard normal (+ a few poison messages that are never committed),
 *   FIFO normal over many shards, consumed by one group per delivery mode
 *   (serialized, concurrent, protected; protected commits publish to a second FIFO topic),
 *   delayed 1–5 s on both topics,
 *   transactional on both topics: producers commit, roll back, or "crash"
 *   (leave it to the check-back; a real signed checker answers from a "database").
 *
 * Definitions used by the assertions:
 * - acknowledged send: an entry the API answered with a messageId (after any retries).
 * - commit acknowledgement: a commit answer `committed` (or `pending` in protected mode) for a receipt handle.
 * - committed twice: two *different* receipt handles of the same (group, messageId) both acknowledged.
 *   Commit fencing makes that impossible; the suite asserts zero. The same handle acknowledged again
 *   (a retry after a lost answer) is idempotent and only counted.
 * - redelivery: a delivery with deliveryCount > 1 (at-least-once after a lost lease); counted.
 * - serialized order violation: message s of a shard delivered (answer received) before the first
 *   commit request of message s-1 was sent (with the handle that took effect, when known).
 * - protected order: per shard, the published outputs' sequence order equals their inputs' sequence order,
 *   one output per input.
 * - exactly once per group: the group's server-side `committed + deadLettered` equals the number of
 *   acknowledged messages routed to it, with backlog, inFlight and pending 0.
 *
 * Operations (issue 17): seeks, redrives and a purge run meanwhile on topics and groups of their
 * own (crash-operations.ts, which states what it checks): nothing acknowledged is lost, nothing
 * committed comes back except through a seek or a redrive, redriven messages come back once,
 * purged ones never.
 *
 * Push (issue 15): a push group on a standard and a FIFO topic of its own pushes to a real HTTP
 * endpoint in this process meanwhile (crash-push.ts, which states what it checks): every
 * acknowledged send pushed at least once, FIFO order of first pushes per shard, signatures
 * verify, nothing left in flight.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { freePort } from '../../local/dynamo.js';
import { startChecker } from '../helpers/checker.js';
import { spawnRuntime, type RuntimeProcess } from '../helpers/process.js';
import { tableName } from '../helpers/stores.js';
import { operationsWorkload } from './crash-operations.js';
import { pushWorkload } from './crash-push.js';
import { Http, SCALE, scaled, seeded, sleep, type Reply } from './support.js';

const TOKEN = 'reliability-token-7f3a';
const SEED = Number(process.env.SLUICE_RELIABILITY_SEED ?? Date.now() % 1_000_000);

const N = scaled(10_000, 2_000);
const CRASHES = scaled(6, 2);
const SHARDS = scaled(64, 32);
const FIFO_PRODUCERS = 4;
/** Production is spread over this long, so that crashes land while producers work. */
const PRODUCE_SECONDS = scaled(70, 20);
const VISIBILITY = 8;
const STD_MAX_DELIVERIES = 6;
const DEADLINE_MS = scaled(25, 10) * 60_000;

type Mode = 'serialized' | 'concurrent' | 'protected';
const FIFO_GROUPS: Record<Mode, string> = { serialized: 'g-ser', concurrent: 'g-con', protected: 'g-pro' };

interface Delivery {
  id: string;
  messageId: string;
  receipt: string;
  shard: string | null;
  seq: number | null;
  deliveryCount: number;
  at: number;
}

interface GroupLog {
  deliveries: Delivery[];
  /** receipt → time the first commit (or release) request with it was sent. */
  firstCommitAttempt: Map<string, number>;
  /** receipt → how many times a commit with it was acknowledged. */
  acks: Map<string, number>;
  expiredAnswers: number;
  /** Responses in which one shard's sequences were not ascending. */
  batchOrderViolations: string[];
}

const newLog = (): GroupLog => ({ deliveries: [], firstCommitAttempt: new Map(), acks: new Map(), expiredAnswers: 0, batchOrderViolations: [] });

describe(`crash test (${SCALE}: ${N} messages, ${CRASHES} SIGKILLs)`, () => {
  it('loses nothing, commits each message once per group, keeps FIFO order and resolves every transaction', async () => {
    const random = seeded(SEED);
    const started = Date.now();
    const endpoint = dynamoEndpoint();
    const table = tableName('crash');
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-crash-'));
    const env = {
      SLUICE_CHECKBACK_EVERY_SECONDS: '1',
      // The key that seals producer secrets must survive restarts, as .data/secrets.key does for npm start.
      SLUICE_SECRETS_KEY: randomBytes(32).toString('base64'),
      SLUICE_DATA_DIR: dataDir,
    };
    const outputs: string[] = [];
    let proc: RuntimeProcess | undefined = await spawnRuntime({ endpoint, table, token: TOKEN, port, env });
    const http = new Http(proc.url, TOKEN);

    // The producers' "database": what each local transaction decided. The checker answers from it.
    const database = new Map<string, 'commit' | 'rollback'>();
    const checker = await startChecker((check) => database.get(check.message.body) ?? 'unknown');
    const report: Record<string, unknown> = { seed: SEED, scale: SCALE };
    // Push (crash-push.ts): its endpoint lives in this process and outlasts every SIGKILL.
    const push = pushWorkload(http, random, { std: scaled(1000, 300), fifo: scaled(1000, 300), shards: scaled(32, 12), produceSeconds: PRODUCE_SECONDS });

    try {
      // ── topology ───────────────────────────────────────────────────────
      const setup = async (method: string, path: string, body: unknown) => {
        const res = await http.call(method, path, body);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(200);
        return res;
      };
      await setup('PUT', '/v1/topics/std', { type: 'standard' });
      await setup('PUT', '/v1/topics/fifo', { type: 'fifo' });
      await setup('PUT', '/v1/topics/fifo-out', { type: 'fifo' });
      await setup('PUT', '/v1/groups/g-std', { subscriptions: [{ topic: 'std' }], visibilityTimeoutSeconds: VISIBILITY, maxDeliveries: STD_MAX_DELIVERIES });
      for (const [mode, group] of Object.entries(FIFO_GROUPS)) {
        await setup('PUT', `/v1/groups/${group}`, { subscriptions: [{ topic: 'fifo' }], deliveryMode: mode, visibilityTimeoutSeconds: VISIBILITY, maxDeliveries: 1000 });
      }
      await setup('PUT', '/v1/groups/g-out', { subscriptions: [{ topic: 'fifo-out' }], deliveryMode: 'concurrent', visibilityTimeoutSeconds: VISIBILITY, maxDeliveries: 1000 });
      await setup('PUT', '/v1/groups/g-dlq', { subscriptions: [{ topic: 'g-std-dlq' }], visibilityTimeoutSeconds: VISIBILITY });
      const ops = operationsWorkload(http, random, {
        fifoPerShard: scaled(20, 10),
        std: scaled(200, 100),
        purge: scaled(200, 100),
        produceSeconds: PRODUCE_SECONDS,
        visibility: VISIBILITY,
      });
      await ops.setup(setup);
      await push.setup(setup);
      const producer = await setup('PUT', '/v1/producers/shop', { checkerUrl: checker.url, checkIntervalSeconds: 1, maxChecks: 100, onMaxChecks: 'keep' });
      checker.secrets = [producer.body.signingSecret];

      // ── the plan ──────────────────────────────────────────────────────
      const count = {
        poison: Math.max(5, Math.round(N * 0.005)),
        fifoNormal: Math.round(N * 0.34),
        stdDelayed: Math.round(N * 0.05),
        fifoDelayed: Math.round(N * 0.05),
        stdTx: Math.round(N * 0.06),
        fifoTx: Math.round(N * 0.06),
        stdNormal: 0,
      };
      count.stdNormal = N - Object.values(count).reduce((a, b) => a + b, 0);
      report.plan = count;
      const shardOf = (i: number) => `s${i % SHARDS}`;

      /** id (the message body) → the acknowledged send. */
      const acked = new Map<string, { topic: string; messageId: string; sequence?: number; transactionId?: string }>();
      const expected = { std: new Set<string>(), fifo: new Set<string>() };
      const txPlan: Array<{ id: string; topic: string; action: 'commit' | 'rollback' | 'crash'; decision: 'commit' | 'rollback' }> = [];
      for (let i = 0; i < count.stdTx + count.fifoTx; i++) {
        const topic = i < count.stdTx ? 'std' : 'fifo';
        const roll = random.next();
        const action = roll < 0.4 ? 'commit' : roll < 0.7 ? 'rollback' : 'crash';
        const decision = action === 'crash' ? (random.next() < 0.5 ? 'commit' : 'rollback') : action;
        txPlan.push({ id: `tx-${topic}-${i}`, topic, action, decision });
      }

      /** Sends entries (with dedupIds) until every one is acknowledged; entries of one shard stay in order. */
      const sendAll = async (topic: string, entries: Array<Record<string, unknown> & { body: string }>) => {
        let pending = entries;
        for (let round = 0; pending.length > 0 && round < 200; round++) {
          const res = await http.call('POST', `/v1/topics/${topic}/messages/batch`, { entries: pending.map((e) => ({ ...e, dedupId: e.body })) }, { deadlineMs: 300_000, timeoutMs: 60_000 });
          expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
          const failed: typeof entries = [];
          for (const r of res.body.results as Array<{ index: number; messageId?: string; sequence?: number; transactionId?: string; error?: { status: number } }>) {
            const entry = pending[r.index]!;
            if (r.messageId) acked.set(entry.body, { topic, messageId: r.messageId, sequence: r.sequence, transactionId: r.transactionId });
            else if (r.error && (r.error.status === 429 || r.error.status === 503)) failed.push(entry);
            else throw new Error(`entry refused: ${JSON.stringify(r)}`);
          }
          pending = failed;
          if (pending.length) await sleep(100);
        }
        expect(pending).toEqual([]);
      };

      const pace = (batches: number) => {
        const t0 = Date.now();
        let n = 0;
        return async () => {
          n++;
          await sleep(t0 + (n * PRODUCE_SECONDS * 1000) / batches - Date.now());
        };
      };

      const produceStd = async () => {
        const entries: Array<{ body: string }> = [];
        for (let i = 0; i < count.stdNormal; i++) entries.push({ body: `std-${i}` });
        for (let i = 0; i < count.poison; i++) entries.splice(random.int(0, entries.length), 0, { body: `poison-${i}` });
        for (const e of entries) expected.std.add(e.body);
        const batches = Math.ceil(entries.length / 100);
        const wait = pace(batches);
        for (let b = 0; b < batches; b++) {
          await sendAll('std', entries.slice(b * 100, b * 100 + 100));
          await wait();
        }
      };

      const produceFifo = async (p: number) => {
        const entries: Array<{ body: string; shardKey: string }> = [];
        for (let i = p; i < count.fifoNormal; i += FIFO_PRODUCERS) {
          // Producer p owns the shards ≡ p (mod FIFO_PRODUCERS): one writer per shard keeps the send order.
          const shard = shardOf(Math.floor(i / FIFO_PRODUCERS) * FIFO_PRODUCERS + p);
          entries.push({ body: `fifo-${i}`, shardKey: shard });
        }
        for (const e of entries) expected.fifo.add(e.body);
        const batches = Math.ceil(entries.length / 100);
        const wait = pace(batches);
        for (let b = 0; b < batches; b++) {
          await sendAll('fifo', entries.slice(b * 100, b * 100 + 100));
          await wait();
        }
      };

      const produceDelayed = async () => {
        const all: Array<{ topic: string; entry: { body: string; delaySeconds: number; shardKey?: string } }> = [];
        for (let i = 0; i < count.stdDelayed; i++) all.push({ topic: 'std', entry: { body: `dstd-${i}`, delaySeconds: random.int(1, 5) } });
        for (let i = 0; i < count.fifoDelayed; i++) all.push({ topic: 'fifo', entry: { body: `dfifo-${i}`, delaySeconds: random.int(1, 5), shardKey: shardOf(i) } });
        for (const { topic, entry } of all) expected[topic as 'std' | 'fifo'].add(entry.body);
        // Scheduled entries are stored one transaction each: smaller batches keep a request short.
        const batches = Math.ceil(all.length / 20);
        const wait = pace(batches);
        for (let b = 0; b < batches; b++) {
          const slice = all.slice(b * 20, b * 20 + 20);
          for (const topic of ['std', 'fifo']) {
            const entries = slice.filter((s) => s.topic === topic).map((s) => s.entry);
            if (entries.length) await sendAll(topic, entries);
          }
          await wait();
        }
      };

      const txOutcomes = { commitCalls: 0, rollbackCalls: 0, crashed: 0, conflicts: 0 };
      const produceTx = async () => {
        const batches = Math.ceil(txPlan.length / 20);
        const wait = pace(batches);
        for (let b = 0; b < batches; b++) {
          const slice = txPlan.slice(b * 20, b * 20 + 20);
          // The local transaction runs (and records its decision) before the half message is sent in this test.
          for (const tx of slice) database.set(tx.id, tx.decision);
          for (const topic of ['std', 'fifo']) {
            const entries = slice
              .filter((t) => t.topic === topic)
              .map((t, j) => ({
                body: t.id,
                ...(topic === 'fifo' ? { shardKey: shardOf(b * 7 + j) } : {}),
                transaction: { producerGroup: 'shop', checkAfterSeconds: t.action === 'crash' ? random.int(1, 3) : 60 },
              }));
            if (entries.length) await sendAll(topic, entries);
          }
          // Each producer resolves its own transaction, all of the batch's producers at once.
          await Promise.all(
            slice.map(async (tx) => {
              if (tx.decision === 'commit') expected[tx.topic as 'std' | 'fifo'].add(tx.id);
              if (tx.action === 'crash') {
                txOutcomes.crashed++;
                return;
              }
              const id = acked.get(tx.id)?.transactionId;
              const res = await http.call('POST', `/v1/transactions/${id}/${tx.action}`, undefined);
              if (res.status === 409) txOutcomes.conflicts++;
              else expect(res.status, JSON.stringify(res.body)).toBe(200);
              if (tx.action === 'commit') txOutcomes.commitCalls++;
              else txOutcomes.rollbackCalls++;
            }),
          );
          await wait();
        }
      };

      // ── consumers ─────────────────────────────────────────────────────
      const logs = new Map<string, GroupLog>(['g-std', 'g-ser', 'g-con', 'g-pro', 'g-out', 'g-dlq'].map((g) => [g, newLog()]));
      let stop = false;

      const record = (group: string, res: Reply): Delivery[] => {
        const log = logs.get(group)!;
        const got: Delivery[] = (res.body.messages as Array<Record<string, any>>).map((m) => ({
          id: m.body,
          messageId: m.messageId,
          receipt: m.receiptHandle,
          shard: m.shardKey,
          seq: m.sequence,
          deliveryCount: m.deliveryCount,
          at: res.at,
          ...(group === 'g-dlq' ? { id: `${m.properties['sluice-dead-letter-source-message-id']}` } : {}),
        }));
        log.deliveries.push(...got);
        const last = new Map<string, number>();
        for (const d of got) {
          if (d.shard === null || d.seq === null) continue;
          if ((last.get(d.shard) ?? 0) >= d.seq) log.batchOrderViolations.push(`${group} ${d.shard}: ${last.get(d.shard)} then ${d.seq} in one answer`);
          last.set(d.shard, d.seq);
        }
        return got;
      };

      /** Commits (retrying lost answers) until acknowledged or expired. */
      const commit = async (group: string, entries: Array<{ receiptHandle: string; publish?: unknown[] }>) => {
        const log = logs.get(group)!;
        const now = Date.now();
        for (const e of entries) if (!log.firstCommitAttempt.has(e.receiptHandle)) log.firstCommitAttempt.set(e.receiptHandle, now);
        const res = await http.call('POST', `/v1/groups/${group}/commit`, { entries }, { deadlineMs: 300_000 });
        expect(res.status, JSON.stringify(res.body).slice(0, 400)).toBe(200);
        for (const r of res.body.results as Array<{ receiptHandle: string; status?: string; error?: { code: string } }>) {
          if (r.status === 'committed' || r.status === 'pending') log.acks.set(r.receiptHandle, (log.acks.get(r.receiptHandle) ?? 0) + 1);
          else if (r.error?.code === 'ReceiptHandleExpired') log.expiredAnswers++;
          else throw new Error(`commit answered ${JSON.stringify(r)}`);
        }
      };

      const consumeAnswers = async (group: string, handle: (res: Reply) => Promise<void>) => {
        for (let round = 0; !stop && round < 1_000_000 && Date.now() - started < DEADLINE_MS; round++) {
          let res: Reply;
          try {
            res = await http.once('POST', `/v1/groups/${group}/receive`, { maxMessages: 10, waitSeconds: 1 });
          } catch {
            await sleep(200); // the runtime is down: whatever it leased comes back after the visibility timeout
            continue;
          }
          if (res.status !== 200) {
            if (res.status >= 500 && res.status !== 503) http.counters.serverErrors.push(`receive ${group}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
            await sleep(200);
            continue;
          }
          await handle(res);
        }
      };
      const consume = (group: string, handle: (got: Delivery[]) => Promise<void>) =>
        consumeAnswers(group, async (res) => {
          const got = record(group, res);
          if (got.length) await handle(got);
        });

      const plain = (group: string) => (got: Delivery[]) => commit(group, got.map((d) => ({ receiptHandle: d.receipt })));
      const consumers = [
        ...Array.from({ length: 3 }, () =>
          consume('g-std', async (got) => {
            const poison = got.filter((d) => d.id.startsWith('poison-'));
            for (const d of poison) {
              // A handler that always fails: give the message back at once, until it is dead-lettered.
              await http.call('POST', '/v1/groups/g-std/visibility', { receiptHandle: d.receipt, visibilityTimeoutSeconds: 0 });
            }
            const rest = got.filter((d) => !d.id.startsWith('poison-'));
            if (rest.length) await plain('g-std')(rest);
          }),
        ),
        ...Array.from({ length: 3 }, () => consume('g-ser', plain('g-ser'))),
        ...Array.from({ length: 2 }, () => consume('g-con', plain('g-con'))),
        ...Array.from({ length: 2 }, () =>
          consume('g-pro', async (got) => {
            // Newest first, each with an output: early commits go pending and complete in order.
            const entries = [...got].reverse().map((d) => ({ receiptHandle: d.receipt, publish: [{ topic: 'fifo-out', body: `out:${d.id}`, shardKey: d.shard }] }));
            if (random.next() < 0.3) for (const entry of entries) await commit('g-pro', [entry]);
            else await commit('g-pro', entries);
          }),
        ),
        ...Array.from({ length: 2 }, () => consume('g-out', plain('g-out'))),
        consume('g-dlq', plain('g-dlq')),
        ...ops.consumers(consumeAnswers),
      ];

      // ── chaos: SIGKILL at random moments, restart on the same port ────
      const crashLog: Array<{ at: number; downMs: number }> = [];
      const chaos = (async () => {
        for (let c = 0; c < CRASHES; c++) {
          await sleep(random.between(scaled(5000, 4000), scaled(14_000, 9000)));
          const at = Date.now();
          outputs.push(proc!.output());
          await proc!.kill('SIGKILL');
          proc = undefined;
          await sleep(random.between(200, 1500));
          proc = await spawnRuntime({ endpoint, table, token: TOKEN, port, env });
          crashLog.push({ at: at - started, downMs: Date.now() - at });
        }
      })();

      const timed = (name: string, work: Promise<void>) => work.then(() => void (producerSeconds[name] = (Date.now() - started) / 1000));
      const producerSeconds: Record<string, number> = {};
      report.producerSeconds = producerSeconds;
      const producers = Promise.all([
        timed('standard', produceStd()),
        ...Array.from({ length: FIFO_PRODUCERS }, (_, p) => timed(`fifo${p}`, produceFifo(p))),
        timed('delayed', produceDelayed()),
        timed('transactional', produceTx()),
        timed('operations', ops.produce()),
        timed('push', push.produce()),
      ]);
      await producers;
      report.producedInSeconds = (Date.now() - started) / 1000;
      await chaos;
      await ops.finish();

      // Wait for every transaction to be resolved and every group to have committed everything.
      const expectations = () => ({
        'g-std': expected.std.size,
        'g-ser': expected.fifo.size,
        'g-con': expected.fifo.size,
        'g-pro': expected.fifo.size,
        'g-out': expected.fifo.size,
      });
      let stats: Record<string, any> = {};
      for (let round = 0; Date.now() - started < DEADLINE_MS; round++) {
        stats = {};
        for (const group of ['g-std', 'g-ser', 'g-con', 'g-pro', 'g-out', 'g-dlq']) stats[group] = (await http.call('GET', `/v1/groups/${group}`)).body;
        const settled = Object.entries(expectations()).every(
          ([g, n]) => stats[g].committed + stats[g].deadLettered === n && stats[g].backlog === 0 && stats[g].inFlight === 0 && stats[g].pending === 0,
        );
        const dlqDone = stats['g-dlq'].committed === stats['g-std'].deadLettered && stats['g-dlq'].inFlight === 0 && stats['g-dlq'].backlog === 0;
        if (settled && dlqDone && (await ops.settled()) && (await push.settled())) break;
        if (round % 15 === 0) {
          console.log(
            `crash test: ${Math.round((Date.now() - started) / 1000)} s`,
            Object.entries(expectations()).map(([g, n]) => `${g} ${stats[g].committed + stats[g].deadLettered}/${n} (in flight ${stats[g].inFlight}, pending ${stats[g].pending}, backlog ${stats[g].backlog})`).join('; '),
            await push.progress(),
          );
        }
        await sleep(2000);
      }
      stop = true;
      await Promise.all(consumers);
      report.seconds = (Date.now() - started) / 1000;
      report.crashes = crashLog;

      // ── invariants ────────────────────────────────────────────────────
      // 1. Transactions: every half message resolved as the producer's database says.
      const txStates: Array<{ tx: (typeof txPlan)[number]; state: string; resolvedBy: string; checks: number }> = [];
      for (let i = 0; i < txPlan.length; i += 20) {
        txStates.push(
          ...(await Promise.all(
            txPlan.slice(i, i + 20).map(async (tx) => {
              const res = await http.call('GET', `/v1/transactions/${acked.get(tx.id)?.transactionId}`);
              return { tx, state: res.body.state as string, resolvedBy: res.body.resolvedBy as string, checks: (res.body.checks as unknown[]).length };
            }),
          )),
        );
      }
      const wrongTx = txStates.filter(({ tx, state }) => state !== (tx.decision === 'commit' ? 'committed' : 'rolled-back'));
      expect(wrongTx.map((w) => `${w.tx.id} (${w.tx.action}, db ${w.tx.decision}): ${w.state}`)).toEqual([]);
      expect(txOutcomes.conflicts).toBe(0);
      report.transactions = {
        ...txOutcomes,
        resolvedByCheck: txStates.filter((t) => t.resolvedBy === 'check').length,
        checkCalls: checker.calls.length,
        unverifiedCheckCalls: checker.calls.filter((c) => !c.verified).length,
      };
      expect(checker.calls.every((c) => c.verified)).toBe(true);

      // 2. Every acknowledged send: one messageId per id (dedupIds held through retries).
      const allIds = [...expected.std, ...expected.fifo, ...txPlan.map((t) => t.id)];
      expect(allIds.filter((id) => !acked.has(id))).toEqual([]);
      report.acknowledgedSends = acked.size;

      // 3. Per group: every expected message delivered, committed (or dead-lettered) exactly once.
      const analysis: Record<string, unknown> = {};
      const outputsOf = new Map<string, Delivery>(); // input id → its output's delivery
      for (const [group, n] of Object.entries(expectations())) {
        const log = logs.get(group)!;
        const want = group === 'g-std' ? expected.std : group === 'g-out' ? new Set([...expected.fifo].map((id) => `out:${id}`)) : expected.fifo;
        const byId = new Map<string, Delivery[]>();
        for (const d of log.deliveries) byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
        const unexpected = [...byId.keys()].filter((id) => !want.has(id));
        const missing = [...want].filter((id) => !byId.has(id));
        const messageIdsPerId = [...byId.values()].filter((ds) => new Set(ds.map((d) => d.messageId)).size > 1).map((ds) => ds[0]!.id);
        // Committed twice: more than one distinct receipt handle of the same message acknowledged.
        const committedTwice = [...byId.values()].filter((ds) => new Set(ds.filter((d) => log.acks.has(d.receipt)).map((d) => d.receipt)).size > 1).map((ds) => ds[0]!.id);
        const repeatAcks = [...log.acks.values()].filter((k) => k > 1).length;
        const withoutAck = [...byId.values()].filter((ds) => !ds.some((d) => log.acks.has(d.receipt))).map((ds) => ds[0]!);
        const redelivered = log.deliveries.filter((d) => d.deliveryCount > 1).length;
        // A message whose commit answer was lost for good must still be committed (or dead-lettered) on the server.
        const lostAckStates: Record<string, number> = {};
        for (const d of withoutAck) {
          const topic = group === 'g-std' ? 'std' : group === 'g-out' ? 'fifo-out' : 'fifo';
          const view = await http.call('GET', `/v1/topics/${topic}/messages/${d.messageId}`);
          const state = (view.body.groups as Array<{ group: string; state: string }>).find((g) => g.group === group)?.state ?? 'none';
          lostAckStates[state] = (lostAckStates[state] ?? 0) + 1;
        }
        expect(unexpected, `${group}: delivered but never acknowledged as sent (or rolled back)`).toEqual([]);
        expect(missing, `${group}: acknowledged but never delivered`).toEqual([]);
        expect(messageIdsPerId, `${group}: one id under several messageIds (a duplicate send)`).toEqual([]);
        expect(committedTwice, `${group}: committed twice through different receipt handles`).toEqual([]);
        expect(Object.keys(lostAckStates).filter((s) => s !== 'committed' && s !== 'dead-lettered'), `${group}: ${JSON.stringify(lostAckStates)}`).toEqual([]);
        expect(log.batchOrderViolations, group).toEqual([]);
        expect(stats[group], group).toMatchObject({ backlog: 0, inFlight: 0, pending: 0 });
        expect(stats[group].committed + stats[group].deadLettered, `${group}: exactly once on the server`).toBe(n);
        if (group !== 'g-std') expect(stats[group].deadLettered, group).toBe(0);
        analysis[group] = {
          expected: n,
          deliveries: log.deliveries.length,
          redelivered,
          committedOnServer: stats[group].committed,
          deadLettered: stats[group].deadLettered,
          repeatAcks,
          commitAnswersLost: withoutAck.length,
          staleHandleAnswers: log.expiredAnswers,
          committedTwice: committedTwice.length,
        };
        if (group === 'g-out') for (const ds of byId.values()) outputsOf.set(ds[0]!.id.slice(4), ds[0]!);
      }

      // 4. Dead letters: only poison messages (or messages that used up maxDeliveries), each once in the DLQ.
      const dlqLog = logs.get('g-dlq')!;
      const dlqSources = new Set(dlqLog.deliveries.map((d) => d.id));
      const poisonIds = [...expected.std].filter((id) => id.startsWith('poison-')).map((id) => acked.get(id)!.messageId);
      expect(poisonIds.filter((m) => !dlqSources.has(m)), 'poison messages not in the dead-letter topic').toEqual([]);
      expect(stats['g-dlq'].committed).toBe(stats['g-std'].deadLettered);
      analysis['g-dlq'] = { deadLetters: dlqSources.size, poison: poisonIds.length, otherDeadLetters: dlqSources.size - poisonIds.length };

      // 5. Serialized order: s delivered only after s-1's commit was sent.
      const ser = logs.get('g-ser')!;
      const commitStart = new Map<string, number>();
      const bySeq = new Map<string, Delivery[]>();
      for (const d of ser.deliveries) bySeq.set(`${d.shard}#${d.seq}`, [...(bySeq.get(`${d.shard}#${d.seq}`) ?? []), d]);
      for (const [key, ds] of bySeq) {
        const acknowledged = ds.find((d) => ser.acks.has(d.receipt));
        const attempts = (acknowledged ? [acknowledged] : ds).map((d) => ser.firstCommitAttempt.get(d.receipt)).filter((t): t is number => t !== undefined);
        if (attempts.length) commitStart.set(key, Math.min(...attempts));
      }
      // A shard's first sequence comes from the clock (docs/design.md, Idle shards expire); from there
      // its sequences are consecutive, so every later one has its predecessor at seq - 1.
      const firstSeq = new Map<string, number>();
      for (const d of ser.deliveries) if (d.seq) firstSeq.set(String(d.shard), Math.min(firstSeq.get(String(d.shard)) ?? d.seq, d.seq));
      const serialViolations: string[] = [];
      for (const d of ser.deliveries) {
        if (!d.seq || d.seq <= (firstSeq.get(String(d.shard)) ?? 1)) continue;
        const previous = commitStart.get(`${d.shard}#${d.seq - 1}`);
        if (previous === undefined || d.at <= previous) serialViolations.push(`${d.shard}: #${d.seq} delivered before #${d.seq - 1} was committed`);
      }
      expect(serialViolations).toEqual([]);

      // 6. Protected: outputs per shard in input order, one per input.
      const pro = logs.get('g-pro')!;
      const inputSeq = new Map<string, { shard: string; seq: number }>();
      for (const d of pro.deliveries) inputSeq.set(d.id, { shard: d.shard!, seq: d.seq! });
      const outputViolations: string[] = [];
      const perShard = new Map<string, Array<{ inSeq: number; outSeq: number }>>();
      for (const [id, out] of outputsOf) {
        const input = inputSeq.get(id);
        if (!input || out.shard !== input.shard) {
          outputViolations.push(`${id}: output on ${out.shard}, input on ${input?.shard}`);
          continue;
        }
        perShard.set(input.shard, [...(perShard.get(input.shard) ?? []), { inSeq: input.seq, outSeq: out.seq! }]);
      }
      for (const [shard, pairs] of perShard) {
        pairs.sort((a, b) => a.outSeq - b.outSeq);
        pairs.forEach((p, i) => {
          if (i > 0 && p.inSeq <= pairs[i - 1]!.inSeq) outputViolations.push(`${shard}: output #${p.outSeq} comes from input #${p.inSeq}, after input #${pairs[i - 1]!.inSeq}`);
        });
      }
      expect(outputViolations).toEqual([]);

      // 7. The clients never saw a 500 (or a 429/503 without Retry-After); the runtime logged no failed request.
      outputs.push(proc?.output() ?? '');
      const failedRequests = outputs.join('\n').split('\n').filter((line) => line.includes('"request failed"'));
      expect(http.counters.serverErrors).toEqual([]);
      expect(failedRequests.slice(0, 5)).toEqual([]);

      // 8. Operations: seeks, redrives and the purge (crash-operations.ts).
      report.operations = await ops.check();

      // 9. Push: at least once, FIFO order of first pushes, signatures, nothing in flight (crash-push.ts).
      report.push = await push.check();

      report.groups = analysis;
      report.serialOrderViolations = serialViolations.length;
      report.protectedOutputViolations = outputViolations.length;
      report.http = { ...http.counters, serverErrors: http.counters.serverErrors.length };
      console.log(`crash test report: ${JSON.stringify(report, null, 1)}`);
    } finally {
      // The runtime's own log, kept for a failure's diagnosis when asked (SLUICE_CRASH_OUTPUT=file).
      if (process.env.SLUICE_CRASH_OUTPUT) {
        const last = proc?.output();
        writeFileSync(process.env.SLUICE_CRASH_OUTPUT, [...outputs, ...(last !== undefined && !outputs.includes(last) ? [last] : [])].join('\n=== next ===\n'));
      }
      await proc?.kill('SIGKILL');
      await checker.close();
      await push.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
