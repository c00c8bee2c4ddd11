/**
 * Purges of FIFO topics (plain and sequenced; serialized and concurrent groups): a purged leased
 * message whose lease expires is not delivered again, a seek earliest after a purge keeps purged
 * messages dropped, and scheduled messages follow their send time (an audit's checks, 2026-12-04).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { drainBodies } from '../helpers/drain.js';
import { Seeker } from '../../lib/services/seeker.js';
import * as build from '../helpers/builders.js';

let h: Harness;
const receive = (g: string, max = 100) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0 });
const drain = (g: string) => drainBodies(h, g);
async function purge(topic: string) {
  const answer = await h.admin.purgeTopic(topic);
  h.clock.advance(1);
  return answer;
}

describe.each([false, true])('purge on FIFO (sequenced %s)', (sequenced) => {
  beforeEach(async () => {
    h = await newHarness();
    await h.admin.putTopic('ledger', build.topic({ type: 'fifo', sequenced }));
  });
  it.each(['serialized', 'concurrent'] as const)('%s: a purged leased message whose lease expires is not delivered again; later ones are', async (mode) => {
    await h.admin.putGroup('g', build.group('ledger', { deliveryMode: mode, visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    const leased = await receive('g', 1);
    expect(leased.map((m) => m.body)).toEqual(['a1']);
    await purge('ledger');
    await h.queue.send('ledger', send('a3', { shardKey: 'A' }));
    h.clock.advance(31_000);
    expect(await drain('g')).toEqual(['a3']);
    expect(await h.admin.getGroup('g')).toMatchObject({ backlog: 0, inFlight: 0 });
  });
  it('seek earliest after a purge: purged messages stay dropped', async () => {
    await h.admin.putGroup('g', build.group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    await h.queue.sendBatch('ledger', ['a1', 'a2'].map((b) => send(b, { shardKey: 'A' })));
    expect(await drain('g')).toEqual(['a1', 'a2']);
    await purge('ledger');
    await h.queue.send('ledger', send('a3', { shardKey: 'A' }));
    await new Seeker(h.stores, h.clock).seek('g', 'earliest', undefined);
    expect(await drain('g')).toEqual(['a3']);
  });
  it('scheduled FIFO message sent before the purge is cancelled; one sent after is delivered', async () => {
    await h.admin.putGroup('g', build.group('ledger', { deliveryMode: 'serialized', visibilityTimeoutSeconds: 30 }));
    h.clock.advance(1);
    await h.queue.send('ledger', send('before', { shardKey: 'A', delaySeconds: 5 }));
    await purge('ledger');
    await h.queue.send('ledger', send('after', { shardKey: 'A', delaySeconds: 5 }));
    h.clock.advance(6_000);
    await h.fire();
    expect(await drain('g')).toEqual(['after']);
  });
});
