import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InvalidArgumentError } from '../../lib/domain/errors.js';
import { MESSAGE_ID_LONGEST, MessageIdCodec, SIV_BYTES } from '../../lib/domain/message-ids.js';
import { MAX_SEQ, type StreamLocal } from '../../lib/domain/streams.js';
import { Limits } from '../../lib/domain/model.js';

// A fixed key and fixed fast-check seeds: ids are pseudorandom bytes, and a pseudorandom
// 400-byte id holds a given 4-byte string with probability ~1e-7 per offset. With a fixed
// key and seed every run checks the same ids, so the test cannot fail by such chance.
const codec = new MessageIdCodec(Buffer.alloc(32, 7));
const other = new MessageIdCodec(Buffer.alloc(32, 8));
const SEED = 20261201;

const name = fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/);
const shardKey = fc.string({ minLength: 1, maxLength: Limits.shardKeyMaxLength, unit: 'binary' });
const local: fc.Arbitrary<StreamLocal> = fc.oneof(
  fc.integer({ min: 0, max: 63 }).map((partition): StreamLocal => ({ kind: 'partition', partition })),
  shardKey.map((k): StreamLocal => ({ kind: 'shard', shardKey: k })),
);
const seq = fc.integer({ min: 1, max: MAX_SEQ });
const generation = fc.integer({ min: 1, max: 2 ** 31 });

/** Every substring of `bytes` of at least 4 bytes is found in `haystack` iff one of its 4-byte windows is. */
const windows = (bytes: Buffer, width: number): Buffer[] =>
  Array.from({ length: Math.max(0, bytes.length - width + 1) }, (_, i) => bytes.subarray(i, i + width));

describe('message ids', () => {
  it('open to the address they seal (any generation, partition, shard key, sequence number)', () => {
    fc.assert(
      fc.property(name, generation, local, seq, (topic, gen, l, s) => {
        const id = codec.messageId({ name: topic, generation: gen }, l, s);
        expect(id).toMatch(/^m[A-Za-z0-9_-]+$/);
        expect(codec.openMessageId(topic, id)).toEqual({ generation: gen, local: l, seq: s });
      }),
      { seed: SEED },
    );
  });

  it('never repeat across topics, re-creations (generations), streams and sequence numbers', () => {
    const address = fc.record({ topic: fc.constantFrom('orders', 'orders2', 'a', 'b.c'), gen: fc.integer({ min: 1, max: 3 }), l: local, s: fc.integer({ min: 1, max: 5 }) });
    fc.assert(
      fc.property(
        fc.uniqueArray(address, { minLength: 2, maxLength: 60, selector: (a) => JSON.stringify([a.topic, a.gen, a.l, a.s]) }),
        (addresses) => {
          const ids = addresses.map((a) => codec.messageId({ name: a.topic, generation: a.gen }, a.l, a.s));
          expect(new Set(ids).size).toBe(addresses.length);
        },
      ),
      { seed: SEED },
    );
    // The case the old ids got wrong: the same shard key and sequence number in two topics, and after a re-creation.
    const k: StreamLocal = { kind: 'shard', shardKey: 'customer-42' };
    const same = [
      codec.messageId({ name: 'orders', generation: 1 }, k, 1),
      codec.messageId({ name: 'invoices', generation: 1 }, k, 1),
      codec.messageId({ name: 'orders', generation: 2 }, k, 1),
    ];
    expect(new Set(same).size).toBe(3);
  });

  it('never contain the shard key: neither its bytes nor the base64 of any substring of 4 bytes or more', () => {
    fc.assert(
      fc.property(name, generation, shardKey, seq, (topic, gen, key, s) => {
        const id = codec.messageId({ name: topic, generation: gen }, { kind: 'shard', shardKey: key }, s);
        const sealed = Buffer.from(id.slice(1), 'base64url');
        const keyBytes = Buffer.from(key, 'utf8');
        // Raw: a substring of >= 4 bytes contains a 4-byte window.
        for (const w of windows(keyBytes, 4)) expect(sealed.includes(w)).toBe(false);
        // Base64: the base64 of a substring of >= 6 bytes starts with that of its first 6 bytes;
        // substrings of 4 and 5 bytes are checked on their own (unpadded), in both alphabets.
        for (const width of [4, 5, 6]) {
          for (const w of windows(keyBytes, width)) {
            for (const encoded of [w.toString('base64url'), w.toString('base64').replace(/=+$/, '')]) expect(id.includes(encoded)).toBe(false);
          }
        }
        if (key.length >= 4) expect(id.includes(key)).toBe(false);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('have a length that depends only on what they seal, at most 557 characters', () => {
    const longest = codec.messageId({ name: 'x'.repeat(128), generation: 2 ** 31 }, { kind: 'shard', shardKey: '\u{10FFFF}'.repeat(64) }, MAX_SEQ);
    const bmp = codec.messageId({ name: 'x', generation: 2 ** 31 }, { kind: 'shard', shardKey: '\uFFFF'.repeat(128) }, MAX_SEQ);
    expect(Math.max(longest.length, bmp.length)).toBeLessThanOrEqual(557);
    expect(bmp.length).toBe(557);
    expect(MESSAGE_ID_LONGEST).toBe(557);
    // A partition id of an ordinary topic: 16 bytes of IV + 6 sealed bytes.
    const partition = codec.messageId({ name: 'orders', generation: 1 }, { kind: 'partition', partition: 3 }, 1000);
    expect(partition.length).toBe(1 + Math.ceil(((SIV_BYTES + 6) * 4) / 3));
  });

  it('name nothing when tampered with, moved to another topic, or sealed with another key', () => {
    fc.assert(
      fc.property(name, generation, local, seq, fc.nat(), fc.integer({ min: 1, max: 255 }), (topic, gen, l, s, at, flip) => {
        const id = codec.messageId({ name: topic, generation: gen }, l, s);
        const bytes = Buffer.from(id.slice(1), 'base64url');
        const i = at % bytes.length;
        bytes[i] = bytes[i]! ^ flip;
        expect(codec.openMessageId(topic, `m${bytes.toString('base64url')}`)).toBeUndefined();
        expect(codec.openMessageId(`${topic}x`, id)).toBeUndefined();
        expect(other.openMessageId(topic, id)).toBeUndefined();
        // Cut short or extended.
        expect(codec.openMessageId(topic, id.slice(0, -1))).toBeUndefined();
        expect(codec.openMessageId(topic, `${id}A`)).toBeUndefined();
      }),
      { seed: SEED },
    );
  });

  it('refuse any other text, including the old address ids (m + base64url("k:<shardKey>|<n>"))', () => {
    for (const id of ['', 'x', 'm', 'm!!', 'mAAAA', `m${Buffer.from('p:1|5').toString('base64url')}`, `m${Buffer.from('k:customer-42|1').toString('base64url')}`, `m${'A'.repeat(2000)}`]) {
      expect(codec.openMessageId('orders', id)).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 600 }), fc.stringMatching(/^m[A-Za-z0-9_-]{1,600}$/)), (text) => {
        expect(codec.openMessageId('orders', text)).toBeUndefined();
      }),
      { seed: SEED },
    );
  });

  it('need a 32-byte key', () => {
    expect(() => new MessageIdCodec(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('receipt handles', () => {
  const receipt = fc.record({
    topic: name,
    stream: fc.oneof(name.map((t) => `t:${t}/p:1`), fc.tuple(name, shardKey).map(([t, k]) => `t:${t}/k:${k}`)),
    seq: seq,
    token: fc.stringMatching(/^[0-9]{1,4}\.[A-Za-z0-9_-]{8}!?$/),
  });

  it('round-trip', () => {
    fc.assert(
      fc.property(receipt, (r) => {
        const handle = codec.sealReceipt(r);
        // `r` first: never a leading `-`, which a command line takes for an option (sluice commit g <handle>).
        expect(handle).toMatch(/^r[A-Za-z0-9_-]+$/);
        expect(codec.openReceipt(handle)).toEqual(r);
      }),
      { seed: SEED },
    );
  });

  it('open the handles issued before the `r` (bare base64url) while their leases last', () => {
    fc.assert(
      fc.property(receipt, (r) => {
        const legacy = codec.sealReceipt(r).slice(1);
        expect(codec.openReceipt(legacy)).toEqual(r);
        expect(() => other.openReceipt(legacy)).toThrow(InvalidArgumentError);
      }),
      { seed: SEED },
    );
  });

  it('reveal no shard key and never open as another lease when tampered with', () => {
    fc.assert(
      fc.property(name, shardKey, seq, fc.nat(), (topic, key, s, at) => {
        const handle = codec.sealReceipt({ topic, stream: `t:${topic}/k:${key}`, seq: s, token: '1.abcdefgh' });
        const sealed = Buffer.from(handle.slice(1), 'base64url');
        for (const w of windows(Buffer.from(key, 'utf8'), 4)) expect(sealed.includes(w)).toBe(false);
        const i = at % sealed.length;
        sealed[i] = sealed[i]! ^ 1;
        expect(() => codec.openReceipt(`r${sealed.toString('base64url')}`)).toThrow(InvalidArgumentError);
        expect(() => codec.openReceipt(sealed.toString('base64url'))).toThrow(InvalidArgumentError);
        expect(() => other.openReceipt(handle)).toThrow(InvalidArgumentError);
      }),
      { seed: SEED },
    );
  });

  it('reject anything else with InvalidArgument, including the old JSON handles and message ids', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.stringMatching(/^[A-Za-z0-9_-]{1,300}$/), fc.json().map((j) => Buffer.from(j).toString('base64url'))), (text) => {
        expect(() => codec.openReceipt(text)).toThrow(InvalidArgumentError);
      }),
      { seed: SEED },
    );
    const old = Buffer.from(JSON.stringify([1, 'orders', 't:orders/p:1', 42, '2.abc'])).toString('base64url');
    const id = codec.messageId({ name: 'orders', generation: 1 }, { kind: 'partition', partition: 1 }, 42);
    for (const bad of ['', 'abc', old, id, id.slice(1), 'A'.repeat(3000)]) {
      expect(() => codec.openReceipt(bad)).toThrow(InvalidArgumentError);
    }
  });
});
