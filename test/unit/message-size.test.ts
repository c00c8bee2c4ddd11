/**
 * The message size limit (`Limits.messageMaxBytes`) by construction: the largest message admitted,
 * as a dead-letter copy with its five added properties, fits one segment item below DynamoDB's
 * 400 KB (docs/design.md, Limits by construction). On DynamoDB Local:
 * test/integration/dead-letter-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ITEM_MAX_BYTES, itemBytes } from '../../lib/adapters/dynamodb/item-size.js';
import { RECORD_OVERHEAD_MAX_BYTES, messageBytes, storedRecordMaxBytes } from '../../lib/adapters/dynamodb/records.js';
import { SEGMENT_ENVELOPE_MAX_BYTES } from '../../lib/adapters/dynamodb/stream-log.js';
import { DEAD_LETTER_PROPERTIES, DEAD_LETTER_PROPERTIES_MAX_BYTES, DeadLetterProperty } from '../../lib/domain/dead-letter.js';
import { PayloadTooLargeError } from '../../lib/domain/errors.js';
import { MESSAGE_ID_LONGEST } from '../../lib/domain/message-ids.js';
import { Limits, type MessageRecord, type SendInput, type Topic } from '../../lib/domain/model.js';
import { MAX_SEQ } from '../../lib/domain/streams.js';
import { cryptoRandom } from '../../lib/ports/random.js';
import { WritePlanner } from '../../lib/services/write-planner.js';
import { propertiesFilling, wide } from '../helpers/widest-properties.js';

/** 128 characters of 3 UTF-8 bytes each, distinct per `n`. */

const input = (properties: Record<string, string>, body = Buffer.alloc(Limits.bodyMaxBytes).toString('base64')): SendInput => ({
  body,
  encoding: 'base64',
  tag: wide(100),
  keys: Array.from({ length: Limits.keysMax }, (_, i) => wide(i)),
  properties,
  shardKey: wide(101),
  delaySeconds: undefined,
  deliverAt: undefined,
  dedupId: undefined,
});

/** Every property name at 128 three-byte characters, values of ASCII filling the message to `bytes`. */
function filled(bytes: number): SendInput {
  const names = Array.from({ length: Limits.propertiesMax }, (_, i) => wide(200 + i));
  return input(propertiesFilling(names, bytes - messageBytes(input(Object.fromEntries(names.map((n) => [n, '']))))));
}

/** The record of `message`'s dead-letter copy at its longest: longest id and names, every added property at its longest. */
const longestCopy = (message: SendInput): MessageRecord => ({
  messageId: 'm'.repeat(MESSAGE_ID_LONGEST),
  topic: 'd'.repeat(Limits.nameMaxLength),
  body: message.body,
  encoding: message.encoding,
  tag: message.tag,
  keys: message.keys,
  properties: {
    ...message.properties,
    [DeadLetterProperty.sourceTopic]: 's'.repeat(Limits.nameMaxLength),
    [DeadLetterProperty.sourceMessageId]: 'm'.repeat(MESSAGE_ID_LONGEST),
    [DeadLetterProperty.group]: 'g'.repeat(Limits.nameMaxLength),
    [DeadLetterProperty.deliveryCount]: String(Number.MAX_SAFE_INTEGER),
    [DeadLetterProperty.reason]: 'lease-expired',
  },
  shardKey: message.shardKey,
  sentAt: Number.MAX_SAFE_INTEGER,
  deliverableAt: Number.MAX_SAFE_INTEGER,
  expiresAt: Number.MAX_SAFE_INTEGER,
  generation: Number.MAX_SAFE_INTEGER,
});

const topic: Topic = { name: 'orders', type: 'fifo', retentionSeconds: 300, maxDelaySeconds: 0, orderGroup: undefined, partitions: 4, createdAt: 1, generation: 1 } as Topic;
const planner = new WritePlanner({ now: () => 1_700_000_000_000 }, cryptoRandom);

describe('the message size limit', () => {
  it('leaves room for the dead-letter copy’s properties and the segment item around it, below 400 KB', () => {
    expect(Limits.messageMaxBytes + RECORD_OVERHEAD_MAX_BYTES + DEAD_LETTER_PROPERTIES_MAX_BYTES + SEGMENT_ENVELOPE_MAX_BYTES).toBeLessThanOrEqual(ITEM_MAX_BYTES);
    expect({ record: RECORD_OVERHEAD_MAX_BYTES, deadLetter: DEAD_LETTER_PROPERTIES_MAX_BYTES, envelope: SEGMENT_ENVELOPE_MAX_BYTES }).toEqual({ record: 840, deadLetter: 996, envelope: 711 });
  });

  it('bounds the stored record of the largest copy exactly: message bytes + record overhead + the added properties', () => {
    const message = filled(Limits.messageMaxBytes);
    expect(messageBytes(message)).toBe(Limits.messageMaxBytes);
    expect(DEAD_LETTER_PROPERTIES).toHaveLength(5);
    expect(storedRecordMaxBytes(longestCopy(message))).toBe(Limits.messageMaxBytes + RECORD_OVERHEAD_MAX_BYTES + DEAD_LETTER_PROPERTIES_MAX_BYTES);
  });

  it('bounds a segment item’s own attributes: the longest stream, numbers at their largest, a grant and a try token', () => {
    const stream = `o:${'o'.repeat(Limits.nameMaxLength)}/q:${'\uFFFF'.repeat(Limits.shardKeyMaxLength)}`;
    const envelope = {
      pk: `S#${stream}`,
      sk: String(MAX_SEQ).padStart(16, '0'),
      n: 100,
      ttl: Number.MAX_SAFE_INTEGER,
      w: 1,
      ga: Number.MAX_SAFE_INTEGER,
      ef: Number.MAX_SAFE_INTEGER,
      pv: Number.MAX_SAFE_INTEGER,
      pt: Number.MAX_SAFE_INTEGER,
      tk: new Uint8Array(6),
      m: [],
    };
    expect(itemBytes(envelope)).toBeLessThanOrEqual(SEGMENT_ENVELOPE_MAX_BYTES);
  });

  it('admits every key, property, tag and shard key at its longest in ASCII with a 256 KiB base64 body', () => {
    const ascii = input(Object.fromEntries(Array.from({ length: Limits.propertiesMax }, (_, i) => [`${i}`.padStart(Limits.propertyKeyMaxLength, 'p'), 'v'.repeat(Limits.propertyValueMaxLength)])));
    const longestAscii = { ...ascii, tag: 't'.repeat(128), shardKey: 'k'.repeat(128), keys: ascii.keys.map((_, i) => `${i}`.padStart(128, 'k')) };
    expect(messageBytes(longestAscii)).toBe(388_696);
    expect(() => planner.route(topic, longestAscii)).not.toThrow();
  });

  it('refuses one byte more with 413 on the message as a whole; an admitted message (a release) is not checked again', () => {
    expect(() => planner.route(topic, filled(Limits.messageMaxBytes))).not.toThrow();
    const over = filled(Limits.messageMaxBytes + 1);
    expect(() => planner.route(topic, over, undefined, 'entries/3')).toThrow(PayloadTooLargeError);
    try {
      planner.route(topic, over, undefined, 'entries/3');
    } catch (error) {
      expect((error as PayloadTooLargeError).issues).toEqual([{ path: 'entries/3', message: expect.stringContaining('too large') }]);
    }
    expect(() => planner.route(topic, over, undefined, '', { admitted: true })).not.toThrow();
  });
});
