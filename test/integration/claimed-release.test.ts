/**
 * The transaction-free release of scheduled messages (docs/design.md,
 * Scheduled and delayed messages: Release): claim, append, mark. A crash at
 * each point, a timer fired twice, two containers releasing the same
 * messages, and a claimant that stalls past the give-up bound while a
 * finisher takes its claim over: every message enters its stream exactly once.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { deferredKey, dueIndexPkOf } from '../../lib/adapters/dynamodb/keys.js';
import { CLAIM_GIVE_UP_MS } from '../../lib/services/claimed-release.js';
import { RELEASE_RETRY_MS } from '../../lib/services/releaser.js';
import { group, topic } from '../helpers/builders.js';
import { crashAt, isClaim, isMark, isSegmentPut, throttled, stallAt } from '../helpers/release-faults.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';

const idOf = (messageId: string) => messageId.slice(1);

const raw = async (h: Harness, id: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: deferredKey(id), ConsistentRead: true }))).Item ?? {};

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
async function copies(h: Harness, messageId: string, partitions: number): Promise<number> {
  let n = 0;
  for (let p = 0; p < partitions; p++) {
    for (const segment of await h.stores.log.read(`t:jobs/p:${p}`, 0, 1000)) n += segment.records.filter((r) => r.messageId === messageId).length;
  }
  return n;
}

async function setup(partitions = 1, random?: () => number) {
  const { client, doc, table, endpoint } = await testTable();
  const clock = new FakeClock();
  const h = harness(doc, table, { clock, ...(random ? { random: { token: () => ulid().slice(-8), fraction: random, id: () => ulid() } } : {}) });
  await h.admin.putTopic('jobs', topic({ partitions }));
  await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 300 }));
  return { h, client, clock, table, endpoint };
}

describe('transaction-free release: claim, append, mark', () => {
  it('a release is a claim, one segment put and a mark; GET by id answers where it landed', async () => {
    const { h } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    h.clock.t = due;
    expect(await h.releaser.release([idOf(sent.messageId)])).toBe(1);
    expect(await raw(h, idOf(sent.messageId))).toMatchObject({ st: 'released', a: { s: 't:jobs/p:0', q: 1 } });
    const item = await raw(h, idOf(sent.messageId));
    for (const attribute of ['rt', 'rf', 'rc', 'g1pk', 'g1sk']) expect(item).not.toHaveProperty(attribute);
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'deliverable', body: 'm' });
    expect(await drain(h)).toEqual(['m']);
  });

  it('crash after the claim: a timer fired again leaves the young claim, the sweep finishes it into the same slot, once', async () => {
    const { h, client } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    const crash = crashAt(client, isSegmentPut);
    await expect(h.releaser.release([id])).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    expect(await raw(h, id)).toMatchObject({ st: 'releasing', a: { s: 't:jobs/p:0', q: 1 }, rf: 1 });
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'scheduled' });
    // The timer fired twice: the claim is young, its claimant may be at work — left, moved to the next sweep.
    expect(await h.releaser.release([id])).toBe(0);
    expect(await raw(h, id)).toMatchObject({ st: 'releasing', g1pk: dueIndexPkOf(Math.floor((due + RELEASE_RETRY_MS) / 60_000), id) });
    expect(await drain(h)).toEqual([]);
    // The sweep finds it by its due-index entry, past the give-up bound: the slot is empty at the head, it puts it there.
    h.clock.advance(RELEASE_RETRY_MS + 6_000);
    expect(await h.timers.sweep()).toBe(1);
    expect(await raw(h, id)).toMatchObject({ st: 'released', a: { s: 't:jobs/p:0', q: 1 } });
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'deliverable' });
    expect(await drain(h)).toEqual(['m']);
    expect(await copies(h, sent.messageId, 1)).toBe(1);
  });

  it('crash after the append, before the mark: the message is in its stream once; a timer fired twice only marks it', async () => {
    const { h, client } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    crashAt(client, isMark);
    await expect(h.releaser.release([id])).rejects.toThrow();
    expect(await raw(h, id)).toMatchObject({ st: 'releasing' });
    expect(await copies(h, sent.messageId, 1)).toBe(1);
    // Young or not, a claim whose slot holds the message is finished at once.
    expect(await h.releaser.release([id])).toBe(1);
    const item = await raw(h, id);
    expect(item).toMatchObject({ st: 'released', a: { s: 't:jobs/p:0', q: 1 } });
    expect(item).not.toHaveProperty('g1pk');
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'deliverable', body: 'm' });
    expect(await h.releaser.release([id])).toBe(0);
    expect(await copies(h, sent.messageId, 1)).toBe(1);
    expect(await drain(h)).toEqual(['m']);
  });

  it('crash after the claim, then another send takes the slot: the finisher re-claims a new address at once (the slot is fenced)', async () => {
    const { h, client } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    crashAt(client, isSegmentPut);
    await expect(h.releaser.release([id])).rejects.toThrow();
    await h.queue.send('jobs', send('other'));
    expect(await h.releaser.release([id])).toBe(1);
    expect(await raw(h, id)).toMatchObject({ st: 'released', a: { s: 't:jobs/p:0', q: 2 } });
    expect(await drain(h)).toEqual(['m', 'other']);
    expect(await copies(h, sent.messageId, 1)).toBe(1);
  });

  it('a claim older than the give-up bound is not appended by its claimant; the sweep releases it once', async () => {
    const { h, client } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    // The claimant stalls between its clock read and its claim: by the time it would put, the claim is too old.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (isClaim(String(context.commandName), args.input)) h.clock.advance(CLAIM_GIVE_UP_MS + 1);
        return next(args);
      },
      { step: 'initialize', name: 'stall' },
    );
    expect(await h.releaser.release([id])).toBe(0);
    client.middlewareStack.remove('stall');
    expect(await raw(h, id)).toMatchObject({ st: 'releasing' });
    expect(await copies(h, sent.messageId, 1)).toBe(0);
    h.clock.advance(RELEASE_RETRY_MS + 6_000);
    expect(await h.timers.sweep()).toBe(1);
    expect(await drain(h)).toEqual(['m']);
    expect(await copies(h, sent.messageId, 1)).toBe(1);
  });

  it('a purge while a claim is left: the finisher cancels it', async () => {
    const { h, client } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    crashAt(client, isSegmentPut);
    await expect(h.releaser.release([id])).rejects.toThrow();
    await h.admin.purgeTopic('jobs');
    h.clock.advance(RELEASE_RETRY_MS + 6_000);
    await h.timers.sweep();
    expect(await raw(h, id)).toMatchObject({ st: 'cancelled' });
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'cancelled' });
    expect(await drain(h)).toEqual([]);
  });

  it('a topic deleted while a claim is left: the finisher cancels it, nothing is appended', async () => {
    const { h, client } = await setup();
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    crashAt(client, isSegmentPut);
    await expect(h.releaser.release([id])).rejects.toThrow();
    await h.admin.deleteTopic('jobs');
    h.clock.advance(RELEASE_RETRY_MS + 6_000);
    await h.timers.sweep();
    expect(await raw(h, id)).toMatchObject({ st: 'cancelled' });
    expect(await copies(h, sent.messageId, 1)).toBe(0);
  });

  it('two containers release the same messages at once: each lands once', async () => {
    const { h, table, endpoint, clock } = await setup(2);
    const other = harness(createDynamoClients({ endpoint, requestTimeoutMs: 10_000 }).doc, table, { clock });
    const due = h.clock.now() + 1000;
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(await h.queue.send('jobs', send(`m-${i}`, { deliverAt: due })));
    const ids = sent.map((s) => idOf(s.messageId));
    h.clock.t = due;
    const [a, b] = await Promise.all([h.releaser.release(ids), other.releaser.release(ids)]);
    expect(a + b).toBeGreaterThanOrEqual(6); // a message found in a lost slot counts for both
    for (const s of sent) {
      expect(await copies(h, s.messageId, 2)).toBe(1);
      expect(await h.queue.getMessage('jobs', s.messageId)).toMatchObject({ state: 'deliverable' });
    }
    expect(await drain(h)).toEqual(sent.map((_, i) => `m-${i}`));
  });

  it('a claimant stalled before its put while a finisher takes the claim over: the finisher uses the same slot, one copy', async () => {
    // 4 partitions: the claimant picks partition 0; the finisher (another container) would pick 3 for a new address.
    const { h, client, table, endpoint, clock } = await setup(4, () => 0);
    const finisher = harness(createDynamoClients({ endpoint, requestTimeoutMs: 10_000 }).doc, table, {
      clock,
      random: { token: () => ulid().slice(-8), fraction: () => 0.99, id: () => ulid() },
    });
    const due = h.clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = idOf(sent.messageId);
    h.clock.t = due;
    // The claim is written, the give-up check passed: the put waits here.
    const { reached: atPut, release: held } = stallAt(client, isSegmentPut);
    const claimant = h.releaser.release([id]);
    await atPut;
    expect(await raw(h, id)).toMatchObject({ st: 'releasing', a: { s: 't:jobs/p:0' } });
    h.clock.advance(CLAIM_GIVE_UP_MS + 1_000);
    expect(await finisher.releaser.release([id])).toBe(1);
    held();
    await claimant; // its put loses the slot to the finisher's, which holds the message: nothing more
    expect(await copies(h, sent.messageId, 4)).toBe(1); // without the same-slot rule: 2 (p:0 and p:3)
    expect(await raw(h, id)).toMatchObject({ st: 'released', a: { s: 't:jobs/p:0' } });
    expect(await drain(h)).toEqual(['m']);
  });
});
