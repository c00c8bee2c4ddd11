/**
 * Learned cursors (docs/design.md, Receive, "Learned cursors"), on DynamoDB Local with two
 * "containers" (two service instances with their own DynamoDB clients on one table): a claim that
 * loses its cursor to another receiver plans again from the cursor its failed write returns
 * (`ALL_OLD`) and from the segments it already read, so its second try is one write — no cursor
 * read, no stream read — unless those segments do not fill what it asks for: then it reads the
 * stream again, so it delivers what a fresh read would have given it. Range claims are off here:
 * these are the ordinary claim's tries, which claims not eligible for a range still make
 * (docs/design.md, Range claims; range-claims.test.ts).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { Seeker } from '../../lib/services/seeker.js';
import { Contention } from '../../lib/adapters/dynamodb/append-contention.js';
import { FakeStopwatch } from '../helpers/fake-stopwatch.js';
import { dynamoEndpoint } from '../helpers/dynamo-endpoint.js';
import { FakeClock, harness, send, testTable, type Harness } from '../helpers/stores.js';
import * as build from '../helpers/builders.js';
import { attributeText, keysCursorOf } from '../helpers/marshalled.js';

let a: Harness;
let b: Harness;

/** What container A sent after its claim lost: cursor reads, stream reads and cursor writes. */
interface AfterLoss {
  cursorReads: number;
  streamReads: number;
  cursorWrites: number;
}

/**
 * Arms A's client so that A's next `times` writes of a cursor of `stream` first wait for `rival`
 * (B's receive), which then moves the cursor under them: A's writes lose. Counts A's calls after the first loss.
 */
function loseNextClaim(client: DynamoDBClient, stream: string, rival: () => Promise<unknown>, times = 1): AfterLoss {
  const after: AfterLoss = { cursorReads: 0, streamReads: 0, cursorWrites: 0 };
  let armed = times;
  let lost = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ExpressionAttributeValues?: Record<string, unknown> };
      const cursorOf = keysCursorOf(args.input, stream);
      if (lost) {
        if (context.commandName === 'GetItemCommand' && cursorOf) after.cursorReads++;
        if (context.commandName === 'BatchGetItemCommand' && JSON.stringify(args.input).includes(stream)) after.cursorReads++;
        if (context.commandName === 'QueryCommand' && attributeText(input.ExpressionAttributeValues?.[':pk']) === `S#${stream}`) after.streamReads++;
        if (context.commandName === 'UpdateItemCommand' && cursorOf) after.cursorWrites++;
      }
      if (armed > 0 && context.commandName === 'UpdateItemCommand' && cursorOf) {
        armed--;
        await rival();
        try {
          return await next(args);
        } finally {
          lost = true;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'loseNextClaim' },
  );
  return after;
}

/** Container A's waits after lost shard claims (full jitter at 0.999 of its range; a try takes no time, so a slot is 2 ms). */
let aWatch: FakeStopwatch;

async function containers() {
  const { doc, table } = await testTable();
  const clock = new FakeClock();
  const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
  aWatch = new FakeStopwatch();
  a = harness(mine.doc, table, { clock, claimContention: new Contention(aWatch, () => 0.999), rangeClaims: false });
  b = harness(doc, table, { clock, rangeClaims: false });
  return mine.client;
}

const bodies = (messages: Array<{ body: string }>) => messages.map((m) => m.body);
const batch = (from: number, count: number, shardKey?: string) =>
  Array.from({ length: count }, (_, i) => send(`m${from + i}`, shardKey === undefined ? {} : { shardKey }));

describe('learned cursors', () => {
  let client: DynamoDBClient;
  beforeEach(async () => {
    client = await containers();
  });

  it('a FIFO shard claim that lost plans again from the returned cursor and the segments it read: one write, no read', async () => {
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    // The shard's cursor exists and its notices are absorbed before the race.
    await a.queue.sendBatch('t', batch(0, 1, 'k'));
    const [warm] = await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    const [done] = await a.queue.commit('g', [warm!.receiptHandle]);
    expect(done).toMatchObject({ status: 'committed' });
    for (let i = 0; i < 3; i++) await a.queue.sendBatch('t', batch(1 + 10 * i, 10, 'k'));

    let rival: Array<{ body: string }> = [];
    const after = loseNextClaim(client, 't:t/k:k', async () => {
      rival = await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    });
    const mine = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

    expect(bodies(rival)).toEqual(batch(1, 10).map((m) => m.body));
    expect(bodies(mine)).toEqual(batch(11, 10).map((m) => m.body));
    expect(after).toEqual({ cursorReads: 0, streamReads: 0, cursorWrites: 1 });
    // It waited one full-jitter turn of at most a slot (the lost try's time) first: no older than a try.
    expect(aWatch.waits).toEqual([2 * 0.999]);
    // The rest is still there, in order, once.
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(batch(21, 10).map((m) => m.body));
    expect(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
  });

  it('a shard claim that lost twice waits a longer turn, still planning from the returned cursor; the next write on the shard waits its turn first', async () => {
    // docs/design.md, "Lost claims on a hot shard": full jitter, as lost appends, per group and shard.
    await a.admin.putTopic('t', build.topic({ type: 'fifo' }));
    await a.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
    await a.queue.sendBatch('t', batch(0, 1, 'k'));
    const [warm] = await a.queue.receive('g', { maxMessages: 1, waitSeconds: 0 });
    expect((await a.queue.commit('g', [warm!.receiptHandle]))[0]).toMatchObject({ status: 'committed' });
    for (let i = 0; i < 4; i++) await a.queue.sendBatch('t', batch(1 + 10 * i, 10, 'k'));

    const rivals: string[] = [];
    const after = loseNextClaim(
      client,
      't:t/k:k',
      async () => rivals.push(...bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))),
      2,
    );
    const mine = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

    expect(rivals).toEqual(batch(1, 20).map((m) => m.body));
    expect(bodies(mine)).toEqual(batch(21, 10).map((m) => m.body));
    // Level 1: up to a slot; level 2: up to two slots. Each try plans from the cursor the lost write
    // returned and the segments the first try read (reusableRead): no read.
    expect(aWatch.waits).toEqual([2 * 0.999, 4 * 0.999]);
    expect(after).toEqual({ cursorReads: 0, streamReads: 0, cursorWrites: 2 });
    // Won at the third try: the shard is remembered one level lower (1). B takes the rest; A's next
    // receive finds no shard ready and waits for nothing.
    expect(bodies(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(batch(31, 10).map((m) => m.body));
    expect(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    expect(aWatch.waits).toHaveLength(2);
    // New messages: A's first write on the shard waits its turn at level 1 (the claim is then planned
    // again), wins, and leaves the shard uncontended.
    await b.queue.sendBatch('t', batch(41, 10, 'k'));
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(batch(41, 10).map((m) => m.body));
    expect(aWatch.waits).toEqual([2 * 0.999, 4 * 0.999, 2 * 0.999]);
    await b.queue.sendBatch('t', batch(51, 10, 'k'));
    expect(bodies(await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }))).toEqual(batch(51, 10).map((m) => m.body));
    expect(aWatch.waits).toHaveLength(3);
  });

  it('a standard partition claim that lost plans again without reading its cursor', async () => {
    await a.admin.putTopic('t', build.topic({ partitions: 1 }));
    await a.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds: 60 }));
    await a.queue.sendBatch('t', batch(0, 10));
    await a.queue.sendBatch('t', batch(10, 10));

    let rival: Array<{ body: string }> = [];
    const after = loseNextClaim(client, 't:t/p:0', async () => {
      rival = await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    });
    const mine = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

    expect(bodies(rival)).toEqual(batch(0, 10).map((m) => m.body));
    expect(bodies(mine)).toEqual(batch(10, 10).map((m) => m.body));
    expect(after).toEqual({ cursorReads: 0, streamReads: 0, cursorWrites: 1 });
    expect(await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 })).toEqual([]);
  });

  it('a partition claim that lost while its stream grew delivers what a fresh read would have given it (review)', async () => {
    await a.admin.putTopic('t', build.topic({ partitions: 1 }));
    await a.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds: 60 }));
    await a.queue.sendBatch('t', batch(0, 10));

    let rival: Array<{ body: string }> = [];
    const after = loseNextClaim(client, 't:t/p:0', async () => {
      // Under A's claim (planned from a read that reached the stream's end), the stream grows by a
      // segment and B takes the first half of the first one: the cursor B leaves knows the stream
      // only as far as A's read did, but a read made now would show the new segment.
      await b.queue.sendBatch('t', batch(10, 10));
      rival = await b.queue.receive('g', { maxMessages: 5, waitSeconds: 0 });
    });
    const mine = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

    expect(bodies(rival)).toEqual(batch(0, 5).map((m) => m.body));
    expect(after.cursorReads).toBe(0);
    // Before learned cursors, A read the cursor and the stream again and got m5..m14.
    expect(bodies(mine)).toEqual(batch(5, 10).map((m) => m.body));
  });

  it('a plan from the earlier read that falls short (its records filtered out) is made again from a fresh read', async () => {
    await a.admin.putTopic('t', build.topic({ partitions: 1 }));
    await a.admin.putGroup('g', build.group([{ topic: 't', tags: ['a'] }], { visibilityTimeoutSeconds: 60 }));
    const tagged = (from: number, tag: string) => batch(from, 10).map((m) => ({ ...m, tag }));
    await a.queue.sendBatch('t', tagged(0, 'a'));
    await a.queue.sendBatch('t', tagged(10, 'b'));

    let rival: Array<{ body: string }> = [];
    loseNextClaim(client, 't:t/p:0', async () => {
      // Under A's claim, B takes the first segment and the stream grows by one the group wants:
      // what A read reaches far enough past the new cursor, but only over records it must skip.
      await b.queue.sendBatch('t', tagged(20, 'a'));
      rival = await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    });
    const mine = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

    expect(bodies(rival)).toEqual(batch(0, 10).map((m) => m.body));
    expect(bodies(mine)).toEqual(batch(20, 10).map((m) => m.body));
  });

  it('a cursor a seek moved back under the lost claim is read from the stream again, from its new start', async () => {
    await a.admin.putTopic('t', build.topic({ partitions: 1 }));
    await a.admin.putGroup('g', build.group('t', { visibilityTimeoutSeconds: 60 }));
    await a.queue.sendBatch('t', batch(0, 10));
    await a.queue.sendBatch('t', batch(10, 10));
    // The group consumes the first ten; A's next receive reads from the second segment on.
    const first = await b.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(first)).toEqual(batch(0, 10).map((m) => m.body));
    await b.queue.commit('g', first.map((m) => m.receiptHandle));

    const after = loseNextClaim(client, 't:t/p:0', async () => {
      // Under A's claim, the group is rewound to the topic's first message.
      await new Seeker(b.stores, b.clock).seek('g', 'earliest', undefined);
    });
    const mine = await a.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });

    // Planned from the rewound cursor: the read A made (second segment on) does not cover it.
    expect(bodies(mine)).toEqual(batch(0, 10).map((m) => m.body));
    expect(after.streamReads).toBe(1);
    expect(after.cursorReads).toBe(0);
  });
});
