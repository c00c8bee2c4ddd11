/**
 * Found by an audit (2026-12-04); before its fix, a sequenced shard with a filled hole (a dead grant, filled by a reader after F, or
 * a writer's own range given up) between two messages. A seek to a time before both binary-searches
 * the shard; a probe that lands in the filler reads it as "every record here is before the time" and
 * moves the search above it, so the message below the filler is never replayed.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Seeker } from '../../lib/services/seeker.js';
import { Sequencer } from '../../lib/adapters/dynamodb/sequencer.js';
import { FILL_AFTER_MS } from '../../lib/domain/gaps.js';
import * as build from '../helpers/builders.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { drainBodies } from '../helpers/drain.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const drain = (g: string) => drainBodies(h, g, { everyMs: FILL_AFTER_MS });

beforeEach(async () => {
  h = await newHarness();
});

describe('seek to a time over a sequenced shard with a filled hole', () => {
  it.each([1, 3, 10])('a dead grant of %i numbers between two messages: both are replayed', async (dead) => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced: true }));
    await h.admin.putGroup('g', build.group(['ledger'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    const from = h.clock.now();
    await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
    // A writer that took its numbers and died; the reader fills them after F.
    await new Sequencer(h.doc, h.table).grant('t:ledger/q:A', dead, h.clock.now());
    h.clock.advance(1);
    await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
    expect(await drain('g')).toEqual(['a1', 'a2']);
    await new Seeker(h.stores, h.clock).seek('g', from, undefined);
    expect(await drain('g')).toEqual(['a1', 'a2']);
  });
});

describe('a group sought to a time earlier: a shard it hears of later', () => {
  it.each([
    [1, 'time'],
    [3, 'time'],
    [1, 'latest'],
  ] as const)('a dead grant of %i numbers between its first two messages (seek %s before): both are delivered', async (dead, to) => {
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced: true }));
    await h.admin.putGroup('g', build.group(['ledger'], { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1_000);
    // Any seek to a time leaves its floor on the notice cursors: every shard cursor created from then
    // on starts at the first message deliverable at or after it (a binary search of the shard).
    await new Seeker(h.stores, h.clock).seek('g', to === 'latest' ? 'latest' : h.clock.now() - 500, undefined);
    h.clock.advance(1);
    await h.queue.send('ledger', send('a1', { shardKey: 'A' }));
    await new Sequencer(h.doc, h.table).grant('t:ledger/q:A', dead, h.clock.now());
    h.clock.advance(1);
    await h.queue.send('ledger', send('a2', { shardKey: 'A' }));
    h.clock.advance(FILL_AFTER_MS);
    expect(await drain('g')).toEqual(['a1', 'a2']);
  });
});
