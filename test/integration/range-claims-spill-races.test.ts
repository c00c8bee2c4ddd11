/**
 * The spill of a crossing range commit (Committer.commitRanges; docs/design.md, Range claims, "Who
 * spills") against what can come between its history write and its cursor write, on DynamoDB Local:
 * a seek (the cursor write loses; the chunk it left must not take a replay's completions out of
 * `dn` when a later spill adopts it), and a throttled history write (the commit took effect and
 * answers so). Both found by a review's probes (2026-12-05).
 */
import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import { SHARD, bodies, completionsIn, cursorItem, hotShard, range, statuses } from '../helpers/hot-shard.js';
import { Seeker } from '../../lib/services/seeker.js';

describe('a crossing range commit spill', () => {
  it('raced by a seek: a repeated commit of the replay after a later spill adopted its chunk answers committed', async () => {
    const { plain, c, mine } = await hotShard();
    let armed = false;
    let seeks = 0;
    mine.client.middlewareStack.add(
      (next, context) => async (args) => {
        const update = String((args.input as { UpdateExpression?: string }).UpdateExpression ?? '');
        // The spill's own cursor write (after its history chunk was written): a seek comes first.
        if (armed && context.commandName === 'UpdateItemCommand' && /SET hw =/.test(update)) {
          armed = false;
          seeks++;
          await new Seeker(plain.stores, plain.clock).seek('g', 'earliest', undefined);
        }
        return next(args);
      },
      { step: 'initialize', name: 'seekBeforeSpill' },
    );

    const held = [];
    for (let i = 0; i < 5; i++) held.push(await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }));
    expect(held.map(bodies)).toEqual([0, 1, 2, 3, 4].map((i) => range(1 + 10 * i, 10)));
    for (const got of held.slice(0, 4)) expect(statuses(await c.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    // 40 → 50: this commit crosses 48 and spills; a seek lands between its chunk and its cursor write.
    armed = true;
    expect(statuses(await c.queue.commit('g', held[4]!.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    expect(seeks).toBe(1);
    let item = await cursorItem(plain);
    // The spill's cursor write lost to the seek: no mark, the 50 completions still in `dn`, seek epoch 1.
    expect([item.hw, Number(item.se), completionsIn(item)]).toEqual([undefined, 1, 50]);

    // The replay after the seek: m1–m10 again, in the new seek epoch, committed as a whole range.
    const replay = await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 });
    expect(bodies(replay)).toEqual(range(1, 10));
    expect(statuses(await c.queue.commit('g', replay.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    item = await cursorItem(plain);
    const inDn = completionsIn(item);
    // A repeat of the replay's commit must answer committed (the replay's completions are in `dn`
    // or in history). Without the race (a seek after the spill) they stay in `dn` as stragglers: 10.
    const repeat = statuses(await plain.queue.commit('g', replay.map((m) => m.receiptHandle)));
    expect(repeat).toEqual(Array(10).fill('committed'));
    // The replay's completions are still in `dn` (besides, the earlier epoch's run of the same numbers
    // until a spill takes them: its entry goes with the numbers it spans).
    expect(inDn).toBeGreaterThanOrEqual(10);
  });

  it('meeting a throttled history write: the commit took effect and answers committed (the spill is housekeeping)', async () => {
    const { c, mine, table, doc } = await hotShard();
    let armed = false;
    mine.client.middlewareStack.add(
      (next, context) => async (args) => {
        const item = (args.input as { Item?: { pk?: unknown } }).Item;
        const pk = typeof item?.pk === 'string' ? item.pk : String((item?.pk as { S?: string } | undefined)?.S ?? '');
        if (armed && context.commandName === 'PutItemCommand' && pk.startsWith('H#')) {
          armed = false;
          throw new ProvisionedThroughputExceededException({ message: 'injected: throttled history write', $metadata: {} });
        }
        return next(args);
      },
      { step: 'initialize', name: 'throttleHistory' },
    );
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await c.queue.receive('g', { maxMessages: 10, waitSeconds: 0 }));
    for (const got of held.slice(0, 4)) expect(statuses(await c.queue.commit('g', got.map((m) => m.receiptHandle)))).toEqual(Array(10).fill('committed'));
    armed = true;
    let answer: unknown;
    try {
      answer = statuses(await c.queue.commit('g', held[4]!.map((m) => m.receiptHandle)));
    } catch (error) {
      answer = `threw ${(error as Error).name}: ${(error as Error).message}`;
    }
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: { pk: cursorPk('g'), sk: SHARD }, ConsistentRead: true }));
    // The commit's own write took effect: 50 completions, no range left.
    expect([Number(Item!.cm), Object.keys(Item!.fq as object).length]).toEqual([50, 0]);
    expect(answer).toEqual(Array(10).fill('committed'));
  });
});
