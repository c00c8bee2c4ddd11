import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeReceipt, directMessageId, encodeReceipt, padSeq, parseDirectMessageId, streamId } from '../../lib/domain/streams.js';
import { InvalidArgumentError } from '../../lib/domain/errors.js';

describe('stream ids', () => {
  it('names standard partitions, FIFO shards and order-group shards', () => {
    expect(streamId({ name: 'a', type: 'standard', orderGroup: undefined }, { kind: 'partition', partition: 2 })).toBe('t:a/p:2');
    expect(streamId({ name: 'a', type: 'fifo', orderGroup: undefined }, { kind: 'shard', shardKey: 'k' })).toBe('t:a/k:k');
    expect(streamId({ name: 'a', type: 'fifo', orderGroup: 'og' }, { kind: 'shard', shardKey: 'k' })).toBe('o:og/k:k');
  });

  it('pads sequence numbers so that strings sort as numbers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (a, b) => {
        expect(Math.sign(padSeq(a).localeCompare(padSeq(b)))).toBe(Math.sign(a - b));
      }),
    );
  });
});

describe('message ids', () => {
  it('round-trip partition and shard addresses', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.string({ minLength: 1, maxLength: 128 }), (seq, shardKey) => {
        expect(parseDirectMessageId(directMessageId({ kind: 'shard', shardKey }, seq))).toEqual({ local: { kind: 'shard', shardKey }, seq });
        expect(parseDirectMessageId(directMessageId({ kind: 'partition', partition: 3 }, seq))).toEqual({ local: { kind: 'partition', partition: 3 }, seq });
      }),
    );
  });

  it('rejects ids that are not addresses', () => {
    for (const id of ['', 'x', 'm', 'm!!', 'mAAAA', `m${Buffer.from('p:1|0').toString('base64url')}`, `m${Buffer.from('q:1|5').toString('base64url')}`]) {
      expect(parseDirectMessageId(id)).toBeUndefined();
    }
  });
});

describe('receipt handles', () => {
  it('round-trip', () => {
    const receipt = { topic: 'orders', stream: 't:orders/p:1', seq: 42, token: '2.abc' };
    expect(decodeReceipt(encodeReceipt(receipt))).toEqual(receipt);
  });

  it('reject anything else with InvalidArgument', () => {
    // Any text, and base64url text (which gets as far as JSON.parse): no string Sluice did not issue decodes.
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.stringMatching(/^[A-Za-z0-9_-]{1,300}$/)), (text) => {
        expect(() => decodeReceipt(text)).toThrow(InvalidArgumentError);
      }),
    );
    // JSON that is not a receipt (a receipt is an array of five), base64url-encoded.
    const notFive = (json: string) => {
      const value: unknown = JSON.parse(json);
      return !(Array.isArray(value) && value.length === 5);
    };
    fc.assert(
      fc.property(fc.json().filter(notFive), (json) => {
        expect(() => decodeReceipt(Buffer.from(json).toString('base64url'))).toThrow(InvalidArgumentError);
      }),
    );
    for (const bad of ['', 'abc', Buffer.from('[1,"t","s",0,"k"]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
      expect(() => decodeReceipt(bad)).toThrow(InvalidArgumentError);
    }
  });
});
