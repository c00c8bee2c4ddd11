/**
 * The transaction-free commit of half messages on standard topics
 * (docs/design.md, Transactional messages: Commit): claim (`committing`),
 * segment put, mark (`committed`). A crash at each point, a retried commit, a
 * check-back that finds a claim a crash left, a claimant stalled while a
 * check worker in another container finishes its claim, a commit racing a
 * check-back and a rollback, a kept half message, a deleted topic, and a
 * claim finished only after its records expired (closed as `expired`, never
 * answered `committed` again): every committed half message enters its stream
 * at most once, exactly once unless its claim was left for its retention, and
 * the first resolution wins.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { checkIndexSk, deferredKey, segmentSk, streamPk } from '../../lib/adapters/dynamodb/keys.js';
import { TransactionAlreadyResolvedError, TransactionExpiredError, UnavailableError } from '../../lib/domain/errors.js';
import { toProblem } from '../../lib/http/problem.js';
import { CLAIM_GIVE_UP_MS, CLAIM_TAKEOVER_MS } from '../../lib/services/claimed-release.js';
import { group, producer, topic } from '../helpers/builders.js';
import { startChecker, type TestChecker } from '../helpers/checker.js';
import { crashAt, isCommitClaim, isCommitMark, isSegmentPut, stallAt } from '../helpers/release-faults.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';

let checker: TestChecker;
beforeAll(async () => {
  checker = await startChecker(() => 'unknown');
});
afterAll(async () => checker.close());

const raw = async (h: Harness, id: string) => (await h.doc.send(new GetCommand({ TableName: h.table, Key: deferredKey(id), ConsistentRead: true }))).Item ?? {};
const idOf = (transactionId: string) => transactionId.slice(1);

/** Every body the group can receive now (committed as it goes). */
async function drain(h: Harness): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 20; round++) {
    const got = await h.queue.receive('g', { maxMessages: 100, waitSeconds: 0 });
    if (got.length === 0) return out.sort();
    out.push(...got.map((m) => m.body));
    await h.queue.commit('g', got.map((m) => m.receiptHandle));
  }
  throw new Error('did not drain');
}

/** How many copies of `messageId` the topic's partitions hold (read from the streams, not delivered). */
async function copies(h: Harness, messageId: string, partitions = 1): Promise<number> {
  let n = 0;
  for (let p = 0; p < partitions; p++) {
    for (const segment of await h.stores.log.read(`t:jobs/p:${p}`, 0, 1000)) n += segment.records.filter((r) => r.messageId === messageId).length;
  }
  return n;
}

/** The DynamoDB commands `run` makes, by name. */
async function commandsOf(client: DynamoDBClient, run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const name = `count-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      seen.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    client.middlewareStack.remove(name);
  }
  return seen;
}

async function setup(options: { partitions?: number; fraction?: () => number; type?: 'standard' | 'fifo'; producer?: Parameters<typeof producer>[1]; retentionSeconds?: number } = {}) {
  const { client, doc, table, endpoint } = await testTable('commit');
  const clock = new FakeClock();
  const random = options.fraction ? { random: { token: () => ulid().slice(-8), fraction: options.fraction, id: () => ulid() } } : {};
  const h = harness(doc, table, { clock, ...random });
  await h.admin.putTopic('jobs', topic({ partitions: options.partitions ?? 1, type: options.type ?? 'standard', retentionSeconds: options.retentionSeconds }));
  await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 300 }));
  const created = await h.transactions.putProducer('shop', producer(checker.url, options.producer));
  checker.secrets = [(created as { signingSecret: string }).signingSecret];
  const half = async (body: string, checkAfterSeconds = 10) => {
    const sent = await h.queue.send('jobs', send(body, { shardKey: options.type === 'fifo' ? 'k' : undefined, transaction: { producerGroup: 'shop', checkAfterSeconds } }));
    return { messageId: sent.messageId, tx: sent.transactionId! };
  };
  return { h, client, clock, table, endpoint, half };
}

/** Runs a sweep of the check-back index and the check workers it dispatched (as the workers would). */
async function checkSweep(h: Harness): Promise<string[]> {
  h.dispatched.length = 0;
  await h.transactions.sweep();
  const ids = [...h.dispatched];
  for (const id of ids) await h.transactions.check(id);
  return ids;
}

describe('transaction-free commit: claim, put, mark', () => {
  it('a commit is a claim, one segment put and a mark, no transaction; a repeat answers the same', async () => {
    const { h, client, half } = await setup();
    await h.queue.send('jobs', send('first')); // opens the stream's epoch (a segment put alone, without its sentinel, from now on)
    const { messageId, tx } = await half('m');
    const commands = await commandsOf(client, async () => expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId }));
    expect(commands).not.toContain('TransactWriteItemsCommand');
    expect(commands.filter((c) => c === 'UpdateItemCommand')).toHaveLength(2); // claim, mark
    expect(commands.filter((c) => c === 'PutItemCommand')).toHaveLength(1); // the segment
    const item = await raw(h, idOf(tx));
    expect(item).toMatchObject({ st: 'committed', a: { s: 't:jobs/p:0', q: 2 }, rb: 'producer' });
    for (const attribute of ['rf', 'rt', 'rc', 'rx', 'g1pk', 'g1sk', 'nc']) expect(item).not.toHaveProperty(attribute);
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId });
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'committed', resolvedBy: 'producer', sequence: null });
    expect(await h.queue.getMessage('jobs', messageId)).toMatchObject({ state: 'deliverable', body: 'm' });
    await expect(h.transactions.rollback(tx)).rejects.toBeInstanceOf(TransactionAlreadyResolvedError);
    expect(await drain(h)).toEqual(['first', 'm']);
  });

  it('FIFO topics keep the transaction (the notice enters with its segment)', async () => {
    const { h, client, half } = await setup({ type: 'fifo' });
    const { messageId, tx } = await half('m');
    const commands = await commandsOf(client, async () => expect(await h.transactions.commit(tx)).toMatchObject({ state: 'committed', messageId, sequence: expect.any(Number) }));
    expect(commands).toContain('TransactWriteItemsCommand');
    expect(commands.filter((c) => c === 'UpdateItemCommand')).toHaveLength(0);
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed' });
    expect(await drain(h)).toEqual(['m']);
  });

  it('crash after the claim: the commit has won (rollback 409, GET committed, the message still prepared); a retry waits, answers 503 and arms a check that finishes it into the same slot', async () => {
    const { h, client, half } = await setup();
    const { messageId, tx } = await half('m');
    const crash = crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    const claimed = await raw(h, idOf(tx));
    expect(claimed).toMatchObject({ st: 'committing', a: { s: 't:jobs/p:0', q: 1 }, rf: 1, rb: 'producer' });
    expect(claimed.g1sk).toBe(checkIndexSk(Number(claimed.nc), idOf(tx))); // its next check: no index write
    await expect(h.transactions.rollback(tx)).rejects.toBeInstanceOf(TransactionAlreadyResolvedError);
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'committed', resolvedBy: 'producer', nextCheckAt: null });
    expect(await h.queue.getMessage('jobs', messageId)).toMatchObject({ state: 'prepared' });
    await expect(h.queue.cancel('jobs', messageId)).rejects.toThrow(/is being committed/);
    expect(await drain(h)).toEqual([]);
    // The producer retries at once: the claim is young (its claimant may be at work), so the answer is "retry".
    const retry = await h.transactions.commit(tx).catch((error: unknown) => error);
    expect(retry).toBeInstanceOf(UnavailableError);
    // Retry-After: until the claim may be taken over (the fake clock stood still: the whole 20 s).
    expect((retry as UnavailableError).retryAfterSeconds).toBe(CLAIM_GIVE_UP_MS / 1000);
    const armed = h.recorded.checks.filter((c) => c.transactionIds.includes(tx));
    expect(armed.at(-1)?.at).toBe(h.clock.now() + CLAIM_GIVE_UP_MS);
    // The armed check-back, once the claim is past the give-up bound: the slot is empty at the head, it puts it there.
    h.clock.advance(CLAIM_GIVE_UP_MS + 1);
    expect(await h.transactions.check(tx)).toBe('skipped');
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed', a: { s: 't:jobs/p:0', q: 1 } });
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId });
    expect(await h.queue.getMessage('jobs', messageId)).toMatchObject({ state: 'deliverable' });
    expect(await drain(h)).toEqual(['m']);
    expect(await copies(h, messageId)).toBe(1);
  });

  it('crash after the claim and nobody retries: the check sweep finishes it (a young claim is left to the next sweep)', async () => {
    const { h, client, half } = await setup();
    const { messageId, tx } = await half('m', 10);
    crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    h.clock.advance(11_000); // the next check is due; the claim is 11 s old, under the give-up bound
    expect(await checkSweep(h)).toEqual([tx]);
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committing' });
    expect(checker.calls.filter((c) => c.transactionId === tx)).toEqual([]); // a claimed commit is not checked back
    h.clock.advance(CLAIM_GIVE_UP_MS);
    expect(await checkSweep(h)).toEqual([tx]);
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed', a: { s: 't:jobs/p:0', q: 1 } });
    expect(await checkSweep(h)).toEqual([]); // out of the check index
    expect(await drain(h)).toEqual(['m']);
    expect(await copies(h, messageId)).toBe(1);
  });

  it('crash after the claim of a half message whose next check is far (600 s, retention 300 s): the claim brings the check forward, so the sweep finishes it before its records expire', async () => {
    const { h, client, half } = await setup({ retentionSeconds: 300 });
    const { messageId, tx } = await half('m', 600);
    crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    const claimed = await raw(h, idOf(tx));
    const due = Number(claimed.rc) + CLAIM_TAKEOVER_MS;
    expect(claimed).toMatchObject({ st: 'committing', nc: due, g1sk: checkIndexSk(due, idOf(tx)) });
    h.clock.advance(CLAIM_TAKEOVER_MS + 1_000);
    // Without the move the entry is due at 600 s, the first finisher comes past the records' expiry
    // (300 s) and closes the claim without an append: the message would be lost.
    expect(await checkSweep(h)).toEqual([tx]);
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed' });
    expect(await drain(h)).toEqual(['m']);
    expect(await copies(h, messageId)).toBe(1);
  });

  it('a commit soon after its send (next check within 120 s) leaves the check-index entry where it is: no index write', async () => {
    const { h, client, half } = await setup();
    const { tx } = await half('m', 60);
    const before = await raw(h, idOf(tx));
    crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committing', nc: before.nc, g1sk: before.g1sk });
  });

  it('crash after the put, before the mark: in its stream once; a retried commit only marks it and answers 200', async () => {
    const { h, client, half } = await setup();
    const { messageId, tx } = await half('m');
    crashAt(client, isCommitMark);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committing' });
    expect(await copies(h, messageId)).toBe(1);
    expect(await h.queue.getMessage('jobs', messageId)).toMatchObject({ state: 'prepared' });
    // Young or not, a claim whose slot holds the message is finished at once.
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId });
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed', a: { s: 't:jobs/p:0', q: 1 } });
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId });
    expect(await copies(h, messageId)).toBe(1);
    expect(await drain(h)).toEqual(['m']);
  });

  it('crash after the claim, then another send takes the slot: a retried commit re-claims a new address at once (the slot is fenced)', async () => {
    const { h, client, half } = await setup();
    const { messageId, tx } = await half('m');
    crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    await h.queue.send('jobs', send('other'));
    expect(await h.transactions.commit(tx)).toEqual({ state: 'committed', messageId });
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed', a: { s: 't:jobs/p:0', q: 2 } });
    expect(await drain(h)).toEqual(['m', 'other']);
    expect(await copies(h, messageId)).toBe(1);
  });

  it('a claimant stalled before its put while a check worker of another container takes the claim over: the same slot, one copy, both answer committed', async () => {
    // 4 partitions: the claimant picks partition 0; the finisher would pick 3 for a new address.
    const { h, client, table, endpoint, clock, half } = await setup({ partitions: 4, fraction: () => 0 });
    const finisher = harness(createDynamoClients({ endpoint, requestTimeoutMs: 10_000 }).doc, table, {
      clock,
      random: { token: () => ulid().slice(-8), fraction: () => 0.99, id: () => ulid() },
    });
    const { messageId, tx } = await half('m');
    // The claim is written, the give-up check passed: the put waits here.
    const { reached: atPut, release: held } = stallAt(client, isSegmentPut);
    const claimant = h.transactions.commit(tx);
    await atPut;
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committing', a: { s: 't:jobs/p:0' } });
    clock.advance(CLAIM_GIVE_UP_MS + 1_000);
    expect(await finisher.transactions.check(tx)).toBe('skipped');
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed', a: { s: 't:jobs/p:0' } });
    held();
    expect(await claimant).toEqual({ state: 'committed', messageId }); // its put lost the slot to the finisher's, which holds the message
    expect(await copies(h, messageId, 4)).toBe(1); // without the same-slot rule: 2 (p:0 and p:3)
    expect(await drain(h)).toEqual(['m']);
  });

  it('a producer commit racing a check-back (commit or rollback) of another container and a rollback: one resolution, appended once or never', async () => {
    const { h, table, endpoint, clock, half } = await setup({ partitions: 2 });
    const other = harness(createDynamoClients({ endpoint, requestTimeoutMs: 10_000 }).doc, table, { clock });
    for (let round = 0; round < 6; round++) {
      checker.answer = () => (round % 2 === 0 ? 'commit' : 'rollback');
      const { messageId, tx } = await half(`race-${round}`, 1);
      clock.advance(1_000);
      const [commit, , rollback] = await Promise.allSettled([h.transactions.commit(tx), other.transactions.check(tx), h.transactions.rollback(tx)]);
      const view = await h.transactions.get(tx);
      expect(['committed', 'rolled-back']).toContain(view.state);
      expect(await raw(h, idOf(tx))).toMatchObject({ st: view.state });
      if (view.state === 'committed') {
        expect(commit).toMatchObject({ status: 'fulfilled', value: { state: 'committed', messageId } });
        expect(rollback).toMatchObject({ status: 'rejected', reason: expect.any(TransactionAlreadyResolvedError) });
      } else {
        expect(commit).toMatchObject({ status: 'rejected', reason: expect.any(TransactionAlreadyResolvedError) });
        expect(rollback).toMatchObject({ status: 'fulfilled' });
      }
      expect(await copies(h, messageId, 2)).toBe(view.state === 'committed' ? 1 : 0);
      expect(await drain(h)).toEqual(view.state === 'committed' ? [`race-${round}`] : []);
    }
    checker.answer = () => 'unknown';
  });

  it('a rollback that read the half message prepared, arriving while a commit holds its claim, answers 409 and changes nothing', async () => {
    const { h, client, table, endpoint, clock, half } = await setup();
    const other = createDynamoClients({ endpoint, requestTimeoutMs: 10_000 });
    const producerB = harness(other.doc, table, { clock });
    const { messageId, tx } = await half('m');
    const isRollback = (command: string, input: unknown) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET st = :rolled');
    let rollbackAt!: () => void;
    const atRollback = new Promise<void>((resolve) => (rollbackAt = resolve));
    let openRollback!: () => void;
    const rollbackGate = new Promise<void>((resolve) => (openRollback = resolve));
    other.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (isRollback(String(context.commandName), args.input)) {
          rollbackAt();
          await rollbackGate; // it read `prepared`; its conditional update waits here
        }
        return next(args);
      },
      { step: 'initialize', name: 'hold-rollback' },
    );
    let putAt!: () => void;
    const atPut = new Promise<void>((resolve) => (putAt = resolve));
    let openPut!: () => void;
    const putGate = new Promise<void>((resolve) => (openPut = resolve));
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (isSegmentPut(String(context.commandName), args.input)) {
          putAt();
          await putGate; // claimed, not put yet
        }
        return next(args);
      },
      { step: 'initialize', name: 'hold-put' },
    );
    const rollback = producerB.transactions.rollback(tx);
    await atRollback;
    const commit = h.transactions.commit(tx);
    await atPut;
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committing' });
    openRollback();
    await expect(rollback).rejects.toBeInstanceOf(TransactionAlreadyResolvedError); // without `IF st = prepared`: rolled back under a claim
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committing', rb: 'producer' });
    openPut();
    expect(await commit).toEqual({ state: 'committed', messageId });
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'committed' });
    expect(await drain(h)).toEqual(['m']);
  });

  it('a kept half message (checks stopped): its claim moves its never-due check-index entry, so the check sweep finishes a crashed commit', async () => {
    const { h, client, half } = await setup({ producer: { maxChecks: 1, onMaxChecks: 'keep' } });
    const { messageId, tx } = await half('m', 1);
    h.clock.advance(1_000);
    await checkSweep(h); // unknown at maxChecks: kept
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'prepared', nextCheckAt: null });
    crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    const claimed = await raw(h, idOf(tx));
    expect(claimed).toMatchObject({ st: 'committing', g1sk: checkIndexSk(Number(claimed.rc) + CLAIM_TAKEOVER_MS, idOf(tx)) });
    h.clock.advance(CLAIM_TAKEOVER_MS + 1_000);
    expect(await checkSweep(h)).toEqual([tx]); // without the move: never due, never found
    expect(await raw(h, idOf(tx))).toMatchObject({ st: 'committed' });
    expect(await drain(h)).toEqual(['m']);
    expect(await copies(h, messageId)).toBe(1);
  });

  it('a topic deleted while a commit is claimed: the claim is closed as committed, nothing is appended', async () => {
    const { h, client, half } = await setup();
    const { messageId, tx } = await half('m');
    crashAt(client, isSegmentPut);
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    await h.admin.deleteTopic('jobs');
    h.clock.advance(CLAIM_TAKEOVER_MS + 1_000);
    await checkSweep(h);
    const item = await raw(h, idOf(tx));
    expect(item).toMatchObject({ st: 'committed' });
    expect(item).not.toHaveProperty('g1pk');
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'committed' });
    expect(await copies(h, messageId)).toBe(0);
  });

  /**
   * What a closed-as-expired commit answers everywhere: the item says `expired` (out of the check
   * index, no claimed address, who committed it when kept), a repeated commit is 409
   * `TransactionExpired` (never 200: the message may never have been appended), a rollback 409, the
   * transaction and the message read `expired`, a check-back has nothing to do.
   */
  async function expectExpired(h: Harness, tx: string, messageId: string) {
    const item = await raw(h, idOf(tx));
    expect(item).toMatchObject({ st: 'expired', rb: 'producer', ra: expect.any(Number) });
    for (const attribute of ['a', 'rf', 'rt', 'rc', 'rx', 'g1pk', 'g1sk', 'nc']) expect(item).not.toHaveProperty(attribute);
    for (let i = 0; i < 2; i++) {
      const repeat = await h.transactions.commit(tx).catch((error: unknown) => error);
      expect(repeat).toBeInstanceOf(TransactionExpiredError);
      expect(toProblem(repeat).problem).toMatchObject({ status: 409, code: 'TransactionExpired', detail: expect.stringContaining('delivered at most once, perhaps never') });
    }
    await expect(h.transactions.rollback(tx)).rejects.toThrow(/was committed \(its message then expired/);
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'expired', resolvedBy: 'producer', resolvedAt: expect.any(String), nextCheckAt: null });
    expect(await h.queue.getMessage('jobs', messageId)).toMatchObject({ state: 'expired', body: 'm', groups: [] });
    expect(await h.transactions.check(tx)).toBe('skipped');
    expect(await checkSweep(h)).toEqual([]);
  }

  it('a claim finished only after its records expired (put, then removed by TTL) is closed as expired, not appended again, and a repeated commit answers 409 TransactionExpired', async () => {
    const { h, client, half, table } = await setup({ retentionSeconds: 300 });
    const { messageId, tx } = await half('m', 3600);
    crashAt(client, isCommitMark); // put, then crash before the mark
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    expect(await drain(h)).toEqual(['m']);
    // The retention passes and TTL removes the segment; nobody finished the claim meanwhile.
    h.clock.advance(400_000);
    await h.doc.send(new DeleteCommand({ TableName: table, Key: { pk: streamPk('t:jobs/p:0'), sk: segmentSk(1) } }));
    const repeat = await h.transactions.commit(tx).catch((error: unknown) => error);
    expect(repeat).toBeInstanceOf(TransactionExpiredError); // was 200 `committed`
    await expectExpired(h, tx, messageId);
    expect(await copies(h, messageId)).toBe(0);
    expect(await drain(h)).toEqual([]);
  });

  it('a claim never put and left until its records\' expiry: the check sweep closes it as expired (never appended, never delivered); the producer\'s retry answers 409 TransactionExpired, not committed', async () => {
    const { h, client, half } = await setup({ retentionSeconds: 300 });
    const { messageId, tx } = await half('m', 3600);
    crashAt(client, isSegmentPut); // claimed, then crash before the put
    await expect(h.transactions.commit(tx)).rejects.toThrow();
    expect(await h.transactions.get(tx)).toMatchObject({ state: 'committed' }); // the commit won at its claim
    // The sweep is down for the whole retention; the first finisher comes within 60 s of the records' expiry.
    h.clock.advance(300_000 - CLAIM_TAKEOVER_MS);
    expect(await checkSweep(h)).toEqual([tx]);
    await expectExpired(h, tx, messageId);
    expect(await copies(h, messageId)).toBe(0);
    expect(await drain(h)).toEqual([]);
  });
});
