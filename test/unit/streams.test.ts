import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isNoticeStream, noticeStream, padSeq, redriveStream, streamId } from '../../lib/domain/streams.js';

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

  it('tells notice streams from partitions, shards (whatever their key) and redrive streams', () => {
    expect(isNoticeStream(noticeStream('t:a', 0))).toBe(true);
    expect(isNoticeStream(noticeStream('o:og', 255))).toBe(true);
    expect(isNoticeStream('t:a/p:0')).toBe(false);
    expect(isNoticeStream('t:a/k:n:3')).toBe(false);
    expect(isNoticeStream('t:a/k:x/n:3')).toBe(false);
    expect(isNoticeStream('t:a/n:03')).toBe(false);
    expect(isNoticeStream(redriveStream('g'))).toBe(false);
  });
});
