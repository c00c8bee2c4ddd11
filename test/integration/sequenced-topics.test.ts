/**
 * The `sequenced` topic setting (docs/design.md, "FIFO topics, delivery modes, time-order groups"):
 * FIFO only, not with an orderGroup, stored as `sq: true` only when set, fixed while the topic
 * lives (PUT with the other value and PATCH → 409, nothing written), free again when a deleted
 * topic is re-created after the re-create wait.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { AdminService } from '../../lib/services/admin-service.js';
import { createStores } from '../../lib/services/stores.js';
import { queryAll } from '../../lib/adapters/dynamodb/call.js';
import { streamPk, TOPIC_PK } from '../../lib/adapters/dynamodb/keys.js';
import { ConflictError, InvalidArgumentError, TopicRecentlyDeletedError } from '../../lib/domain/errors.js';
import { toProblem } from '../../lib/http/problem.js';
import { FakeClock, newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { topic } from '../helpers/builders.js';

let h: Harness;
beforeEach(async () => {
  h = await newHarness();
});

const item = async (name: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: TOPIC_PK, sk: name }, ConsistentRead: true }))).Item;

const refusal = async (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('PUT a sequenced topic', () => {
  it('creates a sequenced FIFO topic: answered, read back and listed with sequenced true, stored as sq', async () => {
    const { topic: created, created: isNew } = await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true }));
    expect(isNew).toBe(true);
    expect(created).toMatchObject({ name: 'ledger', type: 'fifo', orderGroup: null, sequenced: true });
    expect(await h.admin.getTopic('ledger')).toMatchObject({ sequenced: true });
    const stored = await item('ledger');
    expect(stored).toMatchObject({ sq: true });
    expect(stored).not.toHaveProperty('sequenced');
    // The same PUT again is idempotent.
    expect((await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true, retentionSeconds: 3600 }))).topic).toMatchObject({
      sequenced: true,
      retentionSeconds: 3600,
    });
  });

  it('answers sequenced false for every other topic and stores no sq', async () => {
    await h.admin.putTopic('plain', topic());
    await h.admin.putTopic('chained', topic({ type: 'fifo' }));
    await h.admin.putTopic('explicit', topic({ type: 'fifo', sequenced: false }));
    await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true }));
    const listed = (await h.admin.listTopics(100, undefined)).topics;
    expect(Object.fromEntries(listed.map((t) => [t.name, t.sequenced]))).toEqual({ chained: false, explicit: false, ledger: true, plain: false });
    for (const name of ['plain', 'chained', 'explicit']) {
      const stored = await item(name);
      expect(stored).not.toHaveProperty('sq');
      expect(stored).not.toHaveProperty('sequenced');
    }
  });

  it('refuses sequenced on a standard topic and with an orderGroup (400 naming the field), writing nothing', async () => {
    for (const input of [topic({ sequenced: true }), topic({ type: 'fifo', orderGroup: 'books', sequenced: true })]) {
      const error = await refusal(h.admin.putTopic('bad', input));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(toProblem(error).problem).toMatchObject({ status: 400, code: 'InvalidArgument', errors: [{ path: 'sequenced' }] });
    }
    expect(await item('bad')).toBeUndefined();
    // sequenced: false is the default, allowed everywhere.
    expect((await h.admin.putTopic('grouped', topic({ type: 'fifo', orderGroup: 'books', sequenced: false }))).topic).toMatchObject({ sequenced: false });
  });

  it('answers 409 to a PUT of a live topic with the other value, changing nothing (also with partitions given)', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true, retentionSeconds: 3600 }));
    await h.admin.putTopic('chained', topic({ type: 'fifo', retentionSeconds: 3600 }));
    const before = { ledger: await item('ledger'), chained: await item('chained') };
    for (const [name, input] of [
      ['ledger', topic({ type: 'fifo', retentionSeconds: 7200 })],
      ['ledger', topic({ type: 'fifo', sequenced: false, retentionSeconds: 7200, partitions: 4 })],
      ['chained', topic({ type: 'fifo', sequenced: true, retentionSeconds: 7200 })],
      ['chained', topic({ type: 'fifo', sequenced: true, retentionSeconds: 7200, partitions: 4 })],
    ] as const) {
      const error = await refusal(h.admin.putTopic(name, input));
      expect(error).toBeInstanceOf(ConflictError);
      expect(toProblem(error).problem).toMatchObject({ status: 409, code: 'Conflict' });
    }
    expect({ ledger: await item('ledger'), chained: await item('chained') }).toEqual(before);
  });
});

describe('PATCH', () => {
  it('takes sequenced only with its current value (409 otherwise, as for type and orderGroup)', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true }));
    await h.admin.putTopic('plain', topic());
    const before = { ledger: await item('ledger'), plain: await item('plain') };
    await expect(h.admin.patchTopic('ledger', { sequenced: false, retentionSeconds: 600 })).rejects.toMatchObject({ code: 'Conflict' });
    await expect(h.admin.patchTopic('plain', { sequenced: true, retentionSeconds: 600 })).rejects.toMatchObject({ code: 'Conflict' });
    expect({ ledger: await item('ledger'), plain: await item('plain') }).toEqual(before);
    expect((await h.admin.patchTopic('ledger', { sequenced: true, retentionSeconds: 600 })).topic).toMatchObject({ sequenced: true, retentionSeconds: 600 });
    expect((await h.admin.patchTopic('plain', { sequenced: false, retentionSeconds: 600 })).topic).toMatchObject({ sequenced: false, retentionSeconds: 600 });
    expect(await item('ledger')).toMatchObject({ sq: true });
  });
});

describe('re-creating a deleted topic', () => {
  it('takes either value once the re-create wait has passed', async () => {
    // A catalog cache as deployed: re-creating waits twice its lifetime (catalog.ts, recreateAfterMs).
    const clock = new FakeClock();
    const stores = createStores(h.doc, h.table, { clock, secrets: testSecrets, catalog: { cacheTtlMs: 5000, now: () => clock.now() } });
    const admin = new AdminService(stores, clock);

    await admin.putTopic('ledger', topic({ type: 'fifo' }));
    await admin.deleteTopic('ledger');
    clock.advance(4000);
    const early = await refusal(admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true })));
    expect(early).toBeInstanceOf(TopicRecentlyDeletedError);
    expect(await item('ledger')).toMatchObject({ deleted: true });
    expect(await item('ledger')).not.toHaveProperty('sq');

    clock.advance(6000);
    const revived = await admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true }));
    expect(revived).toMatchObject({ created: true, topic: { sequenced: true } });
    expect(await admin.getTopic('ledger')).toMatchObject({ sequenced: true });
    expect(await item('ledger')).toMatchObject({ sq: true, generation: 2 });

    // And back: the revive removes sq.
    await admin.deleteTopic('ledger');
    clock.advance(10_000);
    expect(await admin.putTopic('ledger', topic({ type: 'fifo' }))).toMatchObject({ created: true, topic: { sequenced: false } });
    expect(await admin.getTopic('ledger')).toMatchObject({ sequenced: false });
    const stored = await item('ledger');
    expect(stored).toMatchObject({ generation: 3 });
    expect(stored).not.toHaveProperty('sq');
  });
});

describe('sends', () => {
  it('a message sent to a sequenced topic lands in its /q: shard stream, a chained one in /k:', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo', sequenced: true }));
    await h.admin.putTopic('chained', topic({ type: 'fifo' }));
    await h.queue.send('ledger', send('a', { shardKey: 'acct-1' }));
    await h.queue.send('chained', send('b', { shardKey: 'acct-1' }));
    const segments = async (stream: string) =>
      (await queryAll(h.doc, { TableName: h.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': streamPk(stream) } })).filter(
        (i) => i.sk !== '#',
      );
    expect(await segments('t:ledger/q:acct-1')).toHaveLength(1);
    expect(await segments('t:ledger/k:acct-1')).toHaveLength(0);
    expect(await segments('t:chained/k:acct-1')).toHaveLength(1);
    expect(await segments('t:chained/q:acct-1')).toHaveLength(0);
  });
});
