/**
 * Two corners of the transaction-free release (docs/design.md, Scheduled and
 * delayed messages: Release) that a review of it found untested: a finisher
 * that comes only after the claimed records' expiry (TTL may have removed the
 * segment the claimant put: it must not append the message again, and closes
 * it as `expired`, not `cancelled`), and a
 * stalled claimant whose put lands in the slot a finisher took over while the
 * finisher is appending (its slot check must find the message there).
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { deferredKey, segmentSk, streamPk } from '../../lib/adapters/dynamodb/keys.js';
import { CLAIM_GIVE_UP_MS } from '../../lib/services/claimed-release.js';
import { group, topic } from '../helpers/builders.js';
import { crashAt, isMark, isSegmentPut } from '../helpers/release-faults.js';
import { FakeClock, harness, send, testTable } from '../helpers/stores.js';


/** Is this call a read of the head of `t:jobs/p:0` (the newest segment first)? */
const isHead = (command: string, input: unknown) => command === 'QueryCommand' && JSON.stringify(input).includes('S#t:jobs/p:0') && JSON.stringify(input).includes('"ScanIndexForward":false');

describe('claimed release: review corners', () => {
  it('a claim finished only after its records expired is closed as expired, not appended again (TTL may have removed the segment it put), and says so', async () => {
    const { client, doc, table } = await testTable('claim-expiry');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('jobs', topic({ partitions: 1, retentionSeconds: 300 }));
    await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 300 }));
    const due = clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = sent.messageId.slice(1);
    clock.t = due;
    crashAt(client, isMark); // put, then crash before the mark
    await expect(h.releaser.release([id])).rejects.toThrow();
    clock.advance(1000);
    await h.queue.send('jobs', send('later'));
    const got = await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(got.map((m) => m.body)).toEqual(['m', 'later']);
    await h.queue.commit('g', got.map((m) => m.receiptHandle));
    // The retention passes and TTL removes the segment; the sweep was behind or down meanwhile.
    clock.advance(400_000);
    await doc.send(new DeleteCommand({ TableName: table, Key: { pk: streamPk('t:jobs/p:0'), sk: segmentSk(1) } }));
    for (let i = 0; i < 3; i++) {
      await h.timers.sweep();
      clock.advance(70_000);
    }
    const item = (await doc.send(new GetCommand({ TableName: table, Key: deferredKey(id), ConsistentRead: true }))).Item;
    // Expired, not cancelled (it was delivered; nobody cancelled it) nor released (the item cannot vouch for a copy).
    expect(item?.st).toBe('expired');
    for (const attribute of ['a', 'rf', 'rt', 'rc', 'rx', 'g1pk', 'g1sk']) expect(item).not.toHaveProperty(attribute);
    expect(await h.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    expect(await h.queue.getMessage('jobs', sent.messageId)).toMatchObject({ state: 'expired', body: 'm', groups: [] });
    await expect(h.queue.cancel('jobs', sent.messageId)).rejects.toThrow(/is expired; only scheduled messages can be cancelled/);
  });

  it('a stalled claimant whose put lands in the slot a finisher took over, before the finisher appends: one copy (the slot check)', async () => {
    const { client, doc, table, endpoint } = await testTable('claim-slot-check');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock, random: { token: () => ulid().slice(-8), fraction: () => 0, id: () => ulid() } });
    await h.admin.putTopic('jobs', topic({ partitions: 1 }));
    await h.admin.putGroup('g', group('jobs', { visibilityTimeoutSeconds: 300 }));
    const other = createDynamoClients({ endpoint, requestTimeoutMs: 10_000 });
    const finisher = harness(other.doc, table, { clock });
    const due = clock.now() + 1000;
    const sent = await h.queue.send('jobs', send('m', { deliverAt: due }));
    const id = sent.messageId.slice(1);
    clock.t = due;
    let reachedPut!: () => void;
    const atPut = new Promise<void>((resolve) => (reachedPut = resolve));
    let openPut!: () => void;
    const putGate = new Promise<void>((resolve) => (openPut = resolve));
    let putLanded!: () => void;
    const landed = new Promise<void>((resolve) => (putLanded = resolve));
    let openMark!: () => void;
    const markGate = new Promise<void>((resolve) => (openMark = resolve));
    let putHeld = false;
    let markHeld = false;
    // The claimant stalls at its put, and later at its mark.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = String(context.commandName);
        if (!putHeld && isSegmentPut(command, args.input)) {
          putHeld = true;
          reachedPut();
          await putGate;
          const result = await next(args);
          putLanded();
          return result;
        }
        if (!markHeld && isMark(command, args.input)) {
          markHeld = true;
          await markGate;
        }
        return next(args);
      },
      { step: 'initialize', name: 'stall' },
    );
    // The finisher's second head read (its append, after settle took the empty slot at the head) lets the claimant's put land first.
    let heads = 0;
    other.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (isHead(String(context.commandName), args.input) && ++heads === 2) {
          openPut();
          await landed;
        }
        return next(args);
      },
      { step: 'initialize', name: 'interleave' },
    );
    const claimant = h.releaser.release([id]);
    await atPut;
    clock.advance(CLAIM_GIVE_UP_MS + 1_000);
    await finisher.releaser.release([id]);
    openMark();
    await claimant;
    let copies = 0;
    for (const segment of await h.stores.log.read('t:jobs/p:0', 0, 1000)) copies += segment.records.filter((r) => r.messageId === sent.messageId).length;
    expect(heads).toBeGreaterThanOrEqual(2);
    expect(copies).toBe(1);
    const item = (await doc.send(new GetCommand({ TableName: table, Key: deferredKey(id), ConsistentRead: true }))).Item;
    expect(item?.st).toBe('released');
  });
});
