/**
 * The dead-letter transaction (receiver.ts `deadLetter`) at its maximum, on DynamoDB Local, which
 * enforces DynamoDB's item (400 KB) and transaction (100 items, 4 MB) limits. What makes it
 * largest: the largest message admitted (`Limits.messageMaxBytes`, every key, property, tag and
 * shard key at its longest, the rest in property values), from a FIFO topic (its ids seal the
 * shard key: with a 384-byte one, ids near the longest, 557 characters), 128-character names, 16
 * distinct keys (a key marker each), and the first dead letter of a dead-letter partition (its
 * sentinel). The dead-letter topic's type adds nothing: a copy always goes to a partition stream.
 * Before the message limit, a message that fitted its own segment but whose copy (five more
 * properties) did not failed every receive of its group with a ValidationException.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { itemBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { RECORD_OVERHEAD_MAX_BYTES, messageBytes } from '../../lib/adapters/dynamodb/records.js';
import { SEGMENT_ENVELOPE_MAX_BYTES } from '../../lib/adapters/dynamodb/stream-log.js';
import { DEAD_LETTER_PROPERTIES_MAX_BYTES, DeadLetterProperty } from '../../lib/domain/dead-letter.js';
import { PayloadTooLargeError } from '../../lib/domain/errors.js';
import { Limits, type SendInput } from '../../lib/domain/model.js';
import { SendBody } from '../../functions/api/schemas.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { group, topic } from '../helpers/builders.js';
import { propertiesFilling, wide } from '../helpers/widest-properties.js';

/** DynamoDB's limits, as AWS documents them (not the code's own constants). */
const DYNAMODB_ITEM_MAX_BYTES = 400 * 1024;
const DYNAMODB_TRANSACTION_MAX_ITEMS = 100;
const DYNAMODB_TRANSACTION_MAX_BYTES = 4_000_000;

const SOURCE = 's'.repeat(128);
const GROUP = 'g'.repeat(128);
const DLQ = 'd'.repeat(128);

/** 128 characters of 3 UTF-8 bytes each (CJK, one UTF-16 unit each), distinct per `n`. */

/**
 * The largest message the API admits, `extra` bytes more: a 256 KiB incompressible base64 body,
 * 16 keys, 32 property names, tag and shard key of 128 three-byte characters, and property values
 * of ASCII up to exactly `Limits.messageMaxBytes` (they cannot all be 1,024 characters then).
 */
function largest(extra = 0): SendInput {
  const fixed = {
    body: randomBytes(Limits.bodyMaxBytes).toString('base64'),
    tag: wide(100),
    shardKey: wide(101),
    keys: Array.from({ length: Limits.keysMax }, (_, i) => wide(i)),
  };
  const names = Array.from({ length: Limits.propertiesMax }, (_, i) => wide(200 + i));
  const properties = propertiesFilling(names, Limits.messageMaxBytes + extra - messageBytes({ ...fixed, properties: Object.fromEntries(names.map((n) => [n, ''])) }));
  return send(fixed.body, { ...fixed, encoding: 'base64', properties });
}

interface Recorded {
  items: Array<Record<string, { Item?: Record<string, unknown>; Key?: Record<string, unknown>; TableName?: string }>>;
}

/** Every TransactWriteItems the harness's client sends, as the services built it. */
function recordTransactions(h: Harness): Recorded[] {
  const seen: Recorded[] = [];
  h.doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (String(context.commandName).startsWith('TransactWrite')) seen.push({ items: (args.input as { TransactItems: Recorded['items'] }).TransactItems });
      return next(args);
    },
    { step: 'initialize', name: 'recordTransactions' },
  );
  return seen;
}

let h: Harness;

beforeEach(async () => {
  h = await newHarness();
  await h.admin.putTopic(SOURCE, topic({ type: 'fifo' }));
  await h.admin.putGroup(GROUP, group(SOURCE, { maxDeliveries: 1, deadLetterTopic: DLQ }));
});

describe('the dead-letter transaction at its maximum', () => {
  it('dead-letters the largest message: 21 items, one segment item below 400 KB, the copy intact, counted, the cursor closed', async () => {
    const input = largest();
    // What the API admits: the edge's schema and the size limits (test/unit/message-size.test.ts: the bound).
    expect(SendBody.safeParse(input).success).toBe(true);
    expect(messageBytes(input)).toBe(Limits.messageMaxBytes);
    const sent = await h.queue.send(SOURCE, input);
    const [delivered] = await h.queue.receive(GROUP, { maxMessages: 1, waitSeconds: 0 });
    expect(delivered?.body).toBe(input.body);
    h.clock.advance(30_001);

    const transactions = recordTransactions(h);
    expect(await h.queue.receive(GROUP, { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
    const deadLetters = transactions.filter((t) => t.items.some((i) => String(i.Put?.Item?.pk).startsWith(`S#t:${DLQ}/p:`)));
    expect(deadLetters).toHaveLength(1);
    const { items } = deadLetters[0]!;

    // Items: the sentinel of a partition's first append, the copy's segment, the cursor's close,
    // a dead-letter counter, the link from the original, and a marker per key.
    const kinds = items.map((i) => {
      const [op, body] = Object.entries(i)[0]!;
      const pk = String(body.Item?.pk ?? body.Key?.pk);
      if (pk.startsWith('S#')) return body.Item?.sk === '#' ? 'sentinel' : 'segment';
      return `${op} ${pk.slice(0, 2)}`;
    });
    expect(kinds.sort()).toEqual(
      ['Put D#', 'Update C#', 'Update L#', 'segment', 'sentinel', ...Array.from({ length: Limits.keysMax }, () => 'Put K#')].sort(),
    );
    expect(items.length).toBe(5 + Limits.keysMax);
    expect(items.length).toBeLessThanOrEqual(DYNAMODB_TRANSACTION_MAX_ITEMS);

    // Bytes: each Put as sent, each updated item as it is after the transaction (the cursor, the counter).
    const sizes = await Promise.all(
      items.map(async (i) => {
        if (i.Put?.Item) return itemBytes(i.Put.Item);
        const { Item } = await h.doc.send(new GetCommand({ TableName: i.Update!.TableName!, Key: i.Update!.Key!, ConsistentRead: true }));
        return itemBytes(Item ?? {});
      }),
    );
    const segment = items.findIndex((i) => String(i.Put?.Item?.pk).startsWith('S#') && i.Put?.Item?.sk !== '#');
    const segmentBytes = sizes[segment]!;
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(segmentBytes).toBeLessThanOrEqual(DYNAMODB_ITEM_MAX_BYTES);
    expect(segmentBytes).toBeLessThanOrEqual(Limits.messageMaxBytes + RECORD_OVERHEAD_MAX_BYTES + DEAD_LETTER_PROPERTIES_MAX_BYTES + SEGMENT_ENVELOPE_MAX_BYTES);
    expect(segmentBytes).toBeGreaterThan(Limits.messageMaxBytes);
    expect(Math.max(...sizes.filter((_, n) => n !== segment))).toBeLessThan(4_096);
    expect(total).toBeLessThanOrEqual(DYNAMODB_TRANSACTION_MAX_BYTES);
    // The measured figures (docs/design.md, Limits by construction).
    console.info(`dead-letter transaction at the maximum: ${items.length} items, ${total} bytes (segment item ${segmentBytes})`);

    // The cursor shows the original dead-lettered, naming its copy; the counter counted it.
    const [view] = (await h.queue.getMessage(SOURCE, sent.messageId)).groups;
    expect(view).toMatchObject({ group: GROUP, state: 'dead-lettered', deliveryCount: 1, deadLetter: { topic: DLQ } });
    expect(await h.admin.getGroup(GROUP)).toMatchObject({ deadLettered: 1, backlog: 0, inFlight: 0 });

    // The copy: body, keys, properties, tag and shard key intact, the five properties added, found by key.
    const copy = await h.queue.getMessage(DLQ, view!.deadLetter!.messageId);
    expect(copy).toMatchObject({ body: input.body, encoding: 'base64', keys: input.keys, tag: input.tag, shardKey: input.shardKey });
    expect(copy.properties).toEqual({
      ...input.properties,
      [DeadLetterProperty.sourceTopic]: SOURCE,
      [DeadLetterProperty.sourceMessageId]: sent.messageId,
      [DeadLetterProperty.group]: GROUP,
      [DeadLetterProperty.deliveryCount]: '1',
      [DeadLetterProperty.reason]: 'lease-expired',
    });
    for (const key of [input.keys[0]!, input.keys[Limits.keysMax - 1]!]) {
      expect((await h.queue.messagesByKey(DLQ, key, 10, undefined)).messages.map((m) => m.messageId)).toEqual([copy.messageId]);
    }
  });

  it('refuses a message one byte larger (413), single or in a batch, and writes nothing', async () => {
    const input = largest(1);
    expect(SendBody.safeParse(input).success).toBe(true);
    const transactions = recordTransactions(h);
    await expect(h.queue.send(SOURCE, input)).rejects.toBeInstanceOf(PayloadTooLargeError);
    const [result] = await h.queue.sendBatch(SOURCE, [input]);
    expect(result).toMatchObject({ index: 0, error: { code: 'PayloadTooLarge' } });
    expect(transactions).toEqual([]);
    expect(await h.queue.receive(GROUP, { maxMessages: 1, waitSeconds: 0 })).toEqual([]);
  });
});
