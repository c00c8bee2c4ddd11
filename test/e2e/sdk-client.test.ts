/** The SDK's SluiceClient against the real local runtime: admin, send/receive/commit, query, errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { SluiceApiError, SluiceClient, decodeBody } from '../../lib/client/index.js';
import { TOKEN, startRuntime } from '../helpers/local.js';

let runtime: LocalRuntime;
let client: SluiceClient;

beforeAll(async () => {
  runtime = await startRuntime();
  client = new SluiceClient({ endpoint: runtime.url, token: TOKEN });
});
afterAll(async () => runtime?.stop());

describe('SluiceClient on the local runtime', () => {
  it('creates, reads, lists and deletes topics and groups', async () => {
    expect(await client.health()).toEqual({ status: 'ok' });
    const topic = await client.putTopic('sdk-orders', { type: 'standard', retentionSeconds: 3600 });
    expect(topic).toMatchObject({ name: 'sdk-orders', type: 'standard', retentionSeconds: 3600 });
    await client.putTopic('sdk-fifo', { type: 'fifo' });
    const group = await client.putGroup('sdk-billing', { subscriptions: [{ topic: 'sdk-orders' }], visibilityTimeoutSeconds: 5 });
    expect(group).toMatchObject({ name: 'sdk-billing', deliveryMode: 'serialized', deadLetterTopic: 'sdk-billing-dlq' });

    const names: string[] = [];
    for await (const t of client.iterateTopics()) names.push(t.name);
    expect(names).toEqual(expect.arrayContaining(['sdk-orders', 'sdk-fifo', 'sdk-billing-dlq']));
    expect((await client.listGroups()).groups.map((g) => g.name)).toContain('sdk-billing');
    expect(await client.getTopic('sdk-orders')).toMatchObject({ name: 'sdk-orders', subscribers: ['sdk-billing'] });
    expect(await client.getGroup('sdk-billing')).toMatchObject({ name: 'sdk-billing', backlog: 0, inFlight: 0 });

    await client.deleteTopic('sdk-fifo');
    const gone = await client.getTopic('sdk-fifo').catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(SluiceApiError);
    expect(gone).toMatchObject({ status: 404, code: 'TopicNotFound' });
  });

  it('creates a sequenced FIFO topic, answers sequenced on every read, and refuses to change it (409)', async () => {
    expect(await client.putTopic('sdk-seq', { type: 'fifo', sequenced: true })).toMatchObject({ name: 'sdk-seq', type: 'fifo', sequenced: true });
    expect(await client.putTopic('sdk-seq-plain', { type: 'fifo' })).toMatchObject({ sequenced: false });
    expect(await client.getTopic('sdk-seq')).toMatchObject({ sequenced: true, subscribers: [] });
    const listed = new Map<string, boolean>();
    for await (const t of client.iterateTopics()) listed.set(t.name, t.sequenced);
    expect(listed.get('sdk-seq')).toBe(true);
    expect(listed.get('sdk-seq-plain')).toBe(false);

    for (const refused of [
      () => client.putTopic('sdk-seq', { type: 'fifo', retentionSeconds: 600 }),
      () => client.putTopic('sdk-seq-plain', { type: 'fifo', sequenced: true, retentionSeconds: 600 }),
      () => client.patchTopic('sdk-seq', { sequenced: false, retentionSeconds: 600 }),
    ]) {
      await expect(refused()).rejects.toMatchObject({ status: 409, code: 'Conflict' });
    }
    expect(await client.getTopic('sdk-seq')).toMatchObject({ sequenced: true, retentionSeconds: 259_200 });
    expect(await client.patchTopic('sdk-seq', { sequenced: true, retentionSeconds: 600 })).toMatchObject({ sequenced: true, retentionSeconds: 600 });
    const bad = await client.putTopic('sdk-seq-std', { type: 'standard', sequenced: true }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, code: 'InvalidArgument' });
    expect(bad).toBeInstanceOf(SluiceApiError);
    expect((bad as SluiceApiError).errors?.map((e) => e.path)).toEqual(['sequenced']);
  });

  it('sends, receives, commits and finds messages', async () => {
    const sent = await client.send('sdk-orders', { body: 'hello', keys: ['order-1'], tag: 'created', properties: { source: 'sdk' } });
    expect(sent.state).toBe('deliverable');
    const binary = await client.send('sdk-orders', { body: new Uint8Array([0, 1, 2, 250]) });
    const batch = await client.sendBatch('sdk-orders', [{ body: 'b1' }, { body: 'b2' }]);
    expect(batch.results.map((r) => 'messageId' in r)).toEqual([true, true]);

    const got = await client.receive('sdk-billing', { maxMessages: 10, waitSeconds: 2 });
    expect(got.map((m) => m.messageId).sort()).toEqual(
      [sent.messageId, binary.messageId, ...batch.results.map((r) => ('messageId' in r ? r.messageId : ''))].sort(),
    );
    const hello = got.find((m) => m.messageId === sent.messageId)!;
    expect(hello).toMatchObject({ body: 'hello', tag: 'created', keys: ['order-1'], properties: { source: 'sdk' }, deliveryCount: 1 });
    expect([...decodeBody(got.find((m) => m.messageId === binary.messageId)!)]).toEqual([0, 1, 2, 250]);

    const committed = await client.commit('sdk-billing', got.map((m) => m.receiptHandle));
    expect(committed.results.every((r) => 'status' in r && r.status === 'committed')).toBe(true);

    const view = await client.getMessage('sdk-orders', sent.messageId);
    expect(view.groups).toMatchObject([{ group: 'sdk-billing', state: 'committed', deliveryCount: 1 }]);
    const found = await client.findMessages('sdk-orders', 'order-1');
    expect(found.messages.map((m) => m.messageId)).toEqual([sent.messageId]);
  });

  it('commits a batch with the next receive (receiveAndCommit)', async () => {
    await client.sendBatch('sdk-orders', [{ body: 'r1' }, { body: 'r2' }]);
    const first = await client.receiveAndCommit('sdk-billing', [], { maxMessages: 1, waitSeconds: 2 });
    expect(first.commitResults).toEqual([]);
    const next = await client.receiveAndCommit('sdk-billing', first.messages.map((m) => m.receiptHandle), { maxMessages: 1, waitSeconds: 2 });
    expect(next.commitResults).toEqual([{ receiptHandle: first.messages[0]!.receiptHandle, status: 'committed' }]);
    expect(next.messages.map((m) => m.body)).toHaveLength(1);
    expect([...first.messages, ...next.messages].map((m) => m.body).sort()).toEqual(['r1', 'r2']);
    const last = await client.receiveAndCommit('sdk-billing', next.messages.map((m) => m.receiptHandle), { waitSeconds: 0 });
    expect(last).toMatchObject({ messages: [], commitResults: [{ status: 'committed' }] });
  });

  it('makes a retried send idempotent through its dedupId', async () => {
    const first = await client.send('sdk-orders', { body: 'once', dedupId: 'dedup-1' });
    const again = await client.send('sdk-orders', { body: 'once', dedupId: 'dedup-1' });
    expect(again.messageId).toBe(first.messageId);
    const got = await client.receive('sdk-billing', { maxMessages: 10, waitSeconds: 1 });
    expect(got.map((m) => m.body)).toEqual(['once']);
    await client.commit('sdk-billing', got.map((m) => m.receiptHandle));
  });

  it('releases a lease with visibility 0 so the message is redelivered after the group’s retry back-off (default 1 s)', async () => {
    await client.send('sdk-orders', { body: 'again' });
    const [first] = await client.receive('sdk-billing', { waitSeconds: 2 });
    expect(first?.body).toBe('again');
    const released = Date.now();
    await client.release('sdk-billing', first!.receiptHandle);
    const [second] = await client.receive('sdk-billing', { waitSeconds: 3 });
    expect(second).toMatchObject({ messageId: first!.messageId, deliveryCount: 2 });
    expect(Date.now() - released).toBeGreaterThanOrEqual(1_000);
    const stale = await client.commit('sdk-billing', [first!.receiptHandle]);
    expect(stale.results[0]).toMatchObject({ error: { code: 'ReceiptHandleExpired' } });
    await client.commit('sdk-billing', [second!.receiptHandle]);
  });

  it('schedules a delayed message and cancels another one', async () => {
    const delayed = await client.send('sdk-orders', { body: 'in a second', delaySeconds: 1 });
    expect(delayed).toMatchObject({ state: 'scheduled', deliverAt: expect.any(String) });
    const later = await client.send('sdk-orders', { body: 'never', deliverAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(later.state).toBe('scheduled');
    await client.cancelMessage('sdk-orders', later.messageId);
    expect(await client.getMessage('sdk-orders', later.messageId)).toMatchObject({ state: 'cancelled' });
    await expect(client.cancelMessage('sdk-orders', later.messageId)).rejects.toMatchObject({ status: 409 });

    const got = await client.receive('sdk-billing', { maxMessages: 10, waitSeconds: 5 });
    expect(got.map((m) => m.body)).toEqual(['in a second']);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(delayed.deliverAt!));
    await client.commit('sdk-billing', got.map((m) => m.receiptHandle));
  });

  it('throws SluiceApiError with the problem fields for bad input and a wrong token', async () => {
    const invalid = await client.putGroup('sdk-bad', { subscriptions: [{ topic: 'no such topic!' }] }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(SluiceApiError);
    expect(invalid).toMatchObject({ status: 400, code: 'InvalidArgument', errors: [{ path: 'subscriptions/0/topic' }] });

    const stranger = new SluiceClient({ endpoint: runtime.url, token: 'wrong' });
    await expect(stranger.listTopics()).rejects.toMatchObject({ status: 401, code: 'Unauthorized' });
  });
  it('batches concurrent sends: one shard key stays in call order, a bad message fails alone', async () => {
    await client.putTopic('sdk-batched', { type: 'fifo' });
    await client.putGroup('sdk-batched-g', { subscriptions: [{ topic: 'sdk-batched' }], deliveryMode: 'concurrent' });
    const bodies = Array.from({ length: 130 }, (_, i) => `o${i}`);
    const sent = await Promise.all(bodies.map((body) => client.send('sdk-batched', { body, shardKey: 'acct-1' })));
    expect(sent.map((s) => s.sequence)).toEqual([...sent.map((s) => s.sequence!)].sort((a, b) => a - b));
    const got: string[] = [];
    for (let i = 0; i < 10 && got.length < bodies.length; i++) {
      const batch = await client.receive('sdk-batched-g', { maxMessages: 100, waitSeconds: 1 });
      got.push(...batch.map((m) => m.body));
      if (batch.length > 0) await client.commit('sdk-batched-g', batch.map((m) => ({ receiptHandle: m.receiptHandle })));
    }
    expect(got).toEqual(bodies);

    const outcomes = await Promise.allSettled([
      client.send('sdk-batched', { body: 'fine-1', shardKey: 'acct-2' }),
      client.send('sdk-batched', { body: 'too-long-tag', shardKey: 'acct-2', tag: 't'.repeat(129) }),
      client.send('sdk-batched', { body: 'fine-2', shardKey: 'acct-2' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ status: 400, code: 'InvalidArgument' });
  });
});
