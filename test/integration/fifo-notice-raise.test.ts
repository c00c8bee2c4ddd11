/**
 * A receive raises the FIFO shards its notices announce inside its claims when it claims from
 * them (one cursor update, the ready-index key written once), and on their own otherwise, before
 * its notice cursor moves past them (docs/design.md, Group notice cursors).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { newHarness, send, type Harness } from '../helpers/stores.js';
import { countWrites } from '../helpers/index-units.js';
import * as build from '../helpers/builders.js';
import { readyAtKey } from '../../lib/adapters/dynamodb/keys.js';
import type { DeliveredMessage, DeliveryMode } from '../../lib/domain/model.js';

let h: Harness;
/** DynamoDB write commands sent while counting, and the gsi1 write units they reported. */
let writes: string[];
let gsiUnits: number;

const VISIBILITY_S = 30;
const receive = (g: string, max = 10) => h.queue.receive(g, { maxMessages: max, waitSeconds: 0, topics: undefined });
const commit = (g: string, ...handles: string[]) => h.queue.commit(g, handles);
const cursorItem = async (g: string, key: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: `C#${g}`, sk: `t:ledger/k:${key}` }, ConsistentRead: true }))).Item;

beforeEach(async () => {
  h = await newHarness();
  writes = [];
  gsiUnits = 0;
  countWrites(h.doc, (command, units) => {
    writes.push(command);
    gsiUnits += units;
  });
  await h.admin.putTopic('ledger', build.topic({ type: 'fifo' }));
});

const subscribe = (mode: DeliveryMode) =>
  h.admin.putGroup('g', build.group(['ledger'], { deliveryMode: mode, visibilityTimeoutSeconds: VISIBILITY_S, retryPolicy: { initialSeconds: 0 } }));

describe('FIFO notices raised in the claim', () => {
  for (const mode of ['serialized', 'concurrent', 'protected'] as const) {
    it(`${mode}: claiming an announced idle shard is one shard-cursor write with one index write`, async () => {
      await subscribe(mode);
      // The shard's cursor exists and is idle (off the index) after a first lifecycle.
      await h.queue.send('ledger', send('a', { shardKey: 'A' }));
      const [a] = await receive('g');
      expect((await commit('g', (a as DeliveredMessage).receiptHandle))[0]).toMatchObject({ status: 'committed' });
      expect((await cursorItem('g', 'A'))?.g1sk).toBeUndefined();

      await h.queue.send('ledger', send('b', { shardKey: 'A' }));
      writes = [];
      gsiUnits = 0;
      const before = h.clock.now();
      const got = await receive('g');
      expect(got.map((m) => m.body)).toEqual(['b']);
      // The claim (with the raise) alone: no separate raise, and the notice cursor's advance waits
      // until it lags NOTICE_LAG_MAX notices behind (fifo-notice-lag.test.ts).
      expect(writes).toEqual(['UpdateItemCommand']);
      expect(gsiUnits).toBe(1);
      const item = await cursorItem('g', 'A');
      expect(item?.g1sk).toBe(readyAtKey(before + VISIBILITY_S * 1000));
      expect(Number(item?.kn)).toBe(got[0]?.sequence);
      // Read again, the notice is not raised again.
      writes = [];
      expect(await receive('g')).toEqual([]);
      expect(writes).toEqual([]);
      expect((await commit('g', (got[0] as DeliveredMessage).receiptHandle))[0]).toMatchObject({ status: 'committed' });
      expect((await cursorItem('g', 'A'))?.g1sk).toBeUndefined();
    });
  }

  it('announced shards a receive does not claim from are raised on their own: nothing lost, order kept', async () => {
    await subscribe('serialized');
    const keys = Array.from({ length: 30 }, (_, i) => `K${i}`);
    // Every shard's cursor exists (a first lifecycle each), then two messages per shard.
    await h.queue.sendBatch('ledger', keys.map((k) => send(`${k}-0`, { shardKey: k })));
    for (let got = await receive('g'); got.length > 0; got = await receive('g')) await commit('g', ...got.map((m) => m.receiptHandle));
    await h.queue.sendBatch('ledger', keys.map((k) => send(`${k}-1`, { shardKey: k })));
    await h.queue.sendBatch('ledger', keys.map((k) => send(`${k}-2`, { shardKey: k })));

    const first = await receive('g', 1);
    expect(first).toHaveLength(1);
    // Every announced shard is known to the group after that one receive (its backlog counts them all).
    expect(await h.admin.getGroup('g')).toMatchObject({ inFlight: 1, backlog: 59 });

    const seen = new Map<string, string[]>(keys.map((k) => [k, []]));
    let batch: DeliveredMessage[] = first;
    for (let round = 0; batch.length > 0 && round < 100; round++) {
      for (const m of batch) seen.get(m.body.split('-')[0] as string)?.push(m.body);
      await commit('g', ...batch.map((m) => m.receiptHandle));
      batch = await receive('g', 7);
    }
    for (const k of keys) expect(seen.get(k)).toEqual([`${k}-1`, `${k}-2`]);
    expect(await h.admin.getGroup('g')).toMatchObject({ inFlight: 0, backlog: 0 });
  });
});
