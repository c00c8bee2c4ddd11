/**
 * A seek restarts deliveryCount at 1, so (seq, deliveries) no longer names a lease: the seek epoch
 * does (issue 17; docs/design.md, Seek). A handle leased before a seek, or replaced after it, never
 * answers `committed` for a commit that took effect through another handle; the handle that did
 * commit keeps answering `committed`. Standard and FIFO topics, on DynamoDB Local.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Seeker } from '../../lib/services/seeker.js';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';

let h: Harness;
let seeker: Seeker;

const receive = () => h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
const commit = async (handle: string) => {
  const [result] = await h.queue.commit('g', [handle]);
  return result && 'status' in result ? result.status : result?.error.code;
};

describe.each(['standard', 'fifo'] as const)('seek epochs on a %s topic', (type) => {
  beforeEach(async () => {
    h = await newHarness();
    seeker = new Seeker(h.stores, h.clock);
    await h.admin.putTopic('t', build.topic(type === 'fifo' ? { type: 'fifo' } : {}));
    await h.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds: 30, maxDeliveries: 10 }));
    await h.queue.send('t', send('m', type === 'fifo' ? { shardKey: 'A' } : {}));
  });

  it('a handle leased before the seek answers ReceiptHandleExpired once the message is leased again at deliveryCount 1', async () => {
    const [old] = await receive();
    expect(old?.deliveryCount).toBe(1);
    await seeker.seek('g', 'earliest', undefined);
    const [fresh] = await receive();
    expect([fresh?.body, fresh?.deliveryCount]).toEqual(['m', 1]);
    // Before the fix: the stale handle's commit failed its token condition, and then matched the
    // new lease's completion by (seq, deliveries 1) once that one committed — or here, nothing.
    expect(await commit(old!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(fresh!.receiptHandle)).toBe('committed');
    expect(await commit(fresh!.receiptHandle)).toBe('committed');
    // The stale handle still does not pass for the new lease's commit.
    expect(await commit(old!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await receive()).toEqual([]);
    expect(await h.admin.getGroup('g')).toMatchObject({ backlog: 0, inFlight: 0 });
  });

  it('a lease committed before the seek: its handle answers committed until the replay commits', async () => {
    const [first] = await receive();
    expect(await commit(first!.receiptHandle)).toBe('committed');
    await seeker.seek('g', 'earliest', undefined);
    // The completion is kept: the handle that committed answers committed again.
    expect(await commit(first!.receiptHandle)).toBe('committed');
    const [again] = await receive();
    expect([again?.body, again?.deliveryCount]).toEqual(['m', 1]);
    // Its commit took effect (before the seek): a repeat still answers committed and changes nothing.
    expect(await commit(first!.receiptHandle)).toBe('committed');
    expect(await h.admin.getGroup('g')).toMatchObject({ inFlight: 1 });
    expect(await commit(again!.receiptHandle)).toBe('committed');
    // Once the replay committed, the completion is the replay's (both had deliveryCount 1): the
    // pre-seek handle now answers as one whose message was delivered again.
    expect(await commit(first!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(again!.receiptHandle)).toBe('committed');
  });

  it('the crash test’s case: committed before a seek, replayed at count 1, expired and replaced at count 2; the count-1 handle is stale', async () => {
    const [first] = await receive();
    expect(await commit(first!.receiptHandle)).toBe('committed');
    await seeker.seek('g', 'earliest', undefined);
    const [one] = await receive();
    expect(one?.deliveryCount).toBe(1);
    h.clock.advance(31_000);
    const [two] = await receive();
    expect([two?.body, two?.deliveryCount]).toEqual(['m', 2]);
    // Before the fix this answered `committed`: dn held (seq, deliveries 1) from before the seek.
    expect(await commit(one!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(two!.receiptHandle)).toBe('committed');
    expect(await commit(one!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await receive()).toEqual([]);
  });

  it('two seeks in a row: each epoch’s handles stay apart', async () => {
    const [e0] = await receive();
    await seeker.seek('g', 'earliest', undefined);
    const [e1] = await receive();
    await seeker.seek('g', 'earliest', undefined);
    const [e2] = await receive();
    expect([e0, e1, e2].map((m) => m?.deliveryCount)).toEqual([1, 1, 1]);
    expect(await commit(e1!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(e0!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(e2!.receiptHandle)).toBe('committed');
    expect(await commit(e1!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(e0!.receiptHandle)).toBe('ReceiptHandleExpired');
    expect(await commit(e2!.receiptHandle)).toBe('committed');
  });
});
