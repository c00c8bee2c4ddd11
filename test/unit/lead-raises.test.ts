/**
 * One raise per shard of what a receive read on several notice streams (receiver.ts `leadRaises`;
 * docs/design.md, FIFO, "Notices go to any notice stream").
 */
import { describe, expect, it } from 'vitest';
import { leadRaises, type AnnouncedShard } from '../../lib/services/receiver.js';

/** A raise as `readBucket` makes it, recording what it was asked to raise. */
function raiseOf(stream: string, from: number, to: number, via: string, calls: string[], epoch?: number): AnnouncedShard {
  const shard: AnnouncedShard = {
    stream,
    from,
    to,
    ...(epoch === undefined ? {} : { epoch }),
    applied: false,
    known: false,
    readyPk: `R#${via}`,
    raise: async (f, t, e) => {
      calls.push(`${via} ${stream} ${f}..${t}${e === undefined ? '' : ` e${e}`}`);
      return true;
    },
    apply: () => shard.raise(shard.from, shard.to, shard.epoch),
  };
  return shard;
}

describe('leadRaises', () => {
  it('merges a shard announced on two notice streams into one raise: lowest from, highest to and epoch, through the stream of the highest to; made once', async () => {
    const calls: string[] = [];
    const a = { raises: [raiseOf('t:x/k:1', 5, 9, 'n:0', calls, 5), raiseOf('t:x/k:2', 1, 1, 'n:0', calls)] };
    const b = { raises: [raiseOf('t:x/k:1', 12, 14, 'n:3', calls)] };
    const leads = leadRaises([a, b]);
    expect([...leads.keys()].sort()).toEqual(['t:x/k:1', 't:x/k:2']);
    const lead = leads.get('t:x/k:1')!;
    expect({ from: lead.from, to: lead.to, epoch: lead.epoch, readyPk: lead.readyPk }).toEqual({ from: 5, to: 14, epoch: 5, readyPk: 'R#n:3' });
    // Both buckets hold the one raise: finishing both raises it once.
    expect(a.raises[0]).toBe(lead);
    expect(b.raises[0]).toBe(lead);
    expect(await Promise.all([a.raises[0]!.apply(), b.raises[0]!.apply()])).toEqual([true, true]);
    expect(calls).toEqual(['n:3 t:x/k:1 5..14 e5']);
    // A shard announced once keeps its own raise.
    expect(leads.get('t:x/k:2')).toBe(a.raises[1]);
  });

  it('keeps the latest epoch of all', () => {
    const calls: string[] = [];
    const leads = leadRaises([{ raises: [raiseOf('s', 3, 4, 'n:0', calls, 1)] }, { raises: [raiseOf('s', 9_000, 9_001, 'n:1', calls, 9_000)] }, { raises: [raiseOf('s', 2, 2, 'n:2', calls)] }]);
    expect(leads.get('s')).toMatchObject({ from: 2, to: 9_001, epoch: 9_000 });
  });
});
