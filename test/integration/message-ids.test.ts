/**
 * Opaque message ids on DynamoDB Local (issue 14 contract point, SPEC §3): unique
 * across topics and re-creations, free of the shard key, still one read by id;
 * tampered, foreign and old-format ids name nothing (404), forged receipt
 * handles are a 400; every container of a deployment seals with one key.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, MessageNotFoundError } from '../../lib/domain/errors.js';
import { MessageIdKeys } from '../../lib/adapters/dynamodb/message-id-keys.js';
import { LocalSecretBox } from '../../lib/adapters/local/secret-box.js';
import { newHarness, send, testSecrets, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
});

const flipLastByte = (id: string): string => {
  const bytes = Buffer.from(id.slice(1), 'base64url');
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
  return `m${bytes.toString('base64url')}`;
};

describe('message ids', () => {
  it('differ across topics with the same shard key and sequence number, and show no shard key', async () => {
    await h.admin.putTopic('orders', topic({ type: 'fifo' }));
    await h.admin.putTopic('invoices', topic({ type: 'fifo' }));
    const key = 'customer-4711';
    const a = await h.queue.send('orders', send('a', { shardKey: key }));
    const b = await h.queue.send('invoices', send('b', { shardKey: key }));
    expect([a.sequence, b.sequence]).toEqual([a.sequence, a.sequence]);
    expect(a.messageId).not.toBe(b.messageId);
    for (const id of [a.messageId, b.messageId]) {
      expect(id).not.toContain(key);
      expect(Buffer.from(id.slice(1), 'base64url').includes(Buffer.from('4711'))).toBe(false);
      expect(id).not.toContain(Buffer.from(key).toString('base64url').slice(0, 8));
    }
    // Each is found by id in its own topic only.
    expect((await h.queue.getMessage('orders', a.messageId)).body).toBe('a');
    expect((await h.queue.getMessage('invoices', b.messageId)).body).toBe('b');
    await expect(h.queue.getMessage('invoices', a.messageId)).rejects.toThrow(MessageNotFoundError);
  });

  it('differ after the topic is deleted and re-created; the old id then names nothing', async () => {
    await h.admin.putTopic('orders', topic());
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await h.queue.send('orders', send(`old-${i}`))).messageId);
    const old = [...ids][0]!;
    expect((await h.queue.getMessage('orders', old)).body).toBe('old-0');
    await h.admin.deleteTopic('orders');
    await h.admin.putTopic('orders', topic());
    for (let i = 0; i < 20; i++) ids.add((await h.queue.send('orders', send(`new-${i}`))).messageId);
    expect(ids.size).toBe(40);
    await expect(h.queue.getMessage('orders', old)).rejects.toThrow(MessageNotFoundError);
  });

  it('the ids a receive and a dead-letter copy show are the ones sends answered and the query finds', async () => {
    await h.admin.putTopic('orders', topic());
    await h.admin.putGroup('billing', group('orders', { maxDeliveries: 1, visibilityTimeoutSeconds: 1, deadLetterTopic: 'orders-dlq' }));
    const sent = await h.queue.send('orders', send('x', { keys: ['k1'] }));
    const [got] = await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 });
    expect(got?.messageId).toBe(sent.messageId);
    expect((await h.queue.messagesByKey('orders', 'k1', 10, undefined)).messages.map((m) => m.messageId)).toEqual([sent.messageId]);
    h.clock.advance(2000);
    expect(await h.queue.receive('billing', { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
    const detail = await h.queue.getMessage('orders', sent.messageId);
    const link = detail.groups.find((g) => g.group === 'billing')?.deadLetter;
    expect(link).toMatchObject({ topic: 'orders-dlq' });
    const copy = await h.queue.getMessage('orders-dlq', link!.messageId);
    expect(copy.properties['sluice-dead-letter-source-message-id']).toBe(sent.messageId);
    expect(link!.messageId).not.toBe(sent.messageId);
  });

  it('tampered, foreign, old-format and over-long ids are MessageNotFound, never another error', async () => {
    await h.admin.putTopic('orders', topic({ type: 'fifo' }));
    const { messageId } = await h.queue.send('orders', send('a', { shardKey: 'A' }));
    const bad = [
      flipLastByte(messageId),
      messageId.slice(0, -2),
      `${messageId}A`,
      `m${Buffer.from('k:A|1').toString('base64url')}`,
      `m${'A'.repeat(2000)}`,
      'mAAAA',
      'x',
    ];
    for (const id of bad) await expect(h.queue.getMessage('orders', id), id).rejects.toThrow(MessageNotFoundError);
  });
});

describe('receipt handles', () => {
  it('show no shard key; forged or tampered ones are InvalidArgument on commit, visibility and carried commits', async () => {
    await h.admin.putTopic('ledger', topic({ type: 'fifo' }));
    await h.admin.putGroup('g', group('ledger'));
    await h.queue.send('ledger', send('a', { shardKey: 'customer-4711' }));
    const [got] = await h.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    const handle = got!.receiptHandle;
    expect(handle).not.toContain('customer');
    expect(handle).toMatch(/^r/);
    expect(Buffer.from(handle.slice(1), 'base64url').includes(Buffer.from('4711'))).toBe(false);
    const old = Buffer.from(JSON.stringify([1, 'ledger', 't:ledger/k:customer-4711', 1, 'x'])).toString('base64url');
    const tampered = Buffer.from(handle.slice(1), 'base64url');
    tampered[0] = tampered[0]! ^ 1;
    for (const bad of [old, `r${tampered.toString('base64url')}`, `${handle}A`]) {
      await expect(h.queue.commit('g', [bad])).rejects.toThrow(InvalidArgumentError);
      await expect(h.queue.changeVisibility('g', bad, 0)).rejects.toThrow(InvalidArgumentError);
      await expect(h.queue.commitAndReceive('g', [bad], { maxMessages: 1, waitSeconds: 0 })).rejects.toThrow(InvalidArgumentError);
    }
    // Nothing changed: the real handle still commits.
    expect(await h.queue.commit('g', [handle])).toEqual([{ receiptHandle: handle, status: 'committed' }]);
  });
});

describe('the message-id key', () => {
  it('is created once: containers racing on an empty table all get the same key', async () => {
    const containers = Array.from({ length: 6 }, () => new MessageIdKeys(h.doc, h.table, testSecrets));
    const codecs = await Promise.all(containers.map((c) => c.codec()));
    const ids = codecs.map((c) => c.messageId({ name: 'orders', generation: 1 }, { kind: 'partition', partition: 0 }, 1));
    expect(new Set(ids).size).toBe(1);
    // And later containers read it.
    const later = await new MessageIdKeys(h.doc, h.table, testSecrets).codec();
    expect(later.messageId({ name: 'orders', generation: 1 }, { kind: 'partition', partition: 0 }, 1)).toBe(ids[0]);
  });

  it('is stored sealed: the item holds no key bytes, and another secrets key cannot open it', async () => {
    await h.admin.putTopic('orders', topic());
    const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: 'CONFIG', sk: 'ids' } }));
    expect(Object.keys(Item!).sort()).toEqual(['ca', 'pk', 'sec', 'sk']);
    expect(String(Item!.sec)).toMatch(/^v1:/);
    const stranger = new MessageIdKeys(h.doc, h.table, new LocalSecretBox(randomBytes(32)));
    await expect(stranger.codec()).rejects.toThrow(/cannot be opened/);
  });
});
