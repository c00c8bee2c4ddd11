/**
 * What the range-claim tests on one hot FIFO shard share (docs/design.md, Range claims): group `g`'s
 * cursor of shard `k` of topic `t`, messages `m1, m2, …` on it, commit statuses, and the completions
 * a cursor item holds (a whole range's commit is one entry `[number, epoch, n]` of `dn`).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoClients } from '../../lib/adapters/dynamodb/client.js';
import { cursorPk } from '../../lib/adapters/dynamodb/keys.js';
import * as build from './builders.js';
import { contendedClaims } from './contended-claims.js';
import { dynamoEndpoint } from './dynamo-endpoint.js';
import { FakeClock, harness, send, testTable, type Harness } from './stores.js';

export const SHARD = 't:t/k:k';
/** The claim contention key of group `g` on the shard (contended-claims.ts). */
export const KEY = `g\u0000${SHARD}`;

export const bodies = (messages: Array<{ body: string }>) => messages.map((m) => m.body);
/** `m<from>` … `m<from + count − 1>`. */
export const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => `m${from + i}`);
export const statuses = (results: Array<{ status?: string; error?: { code: string } }>) => results.map((r) => r.status ?? r.error?.code);

/** Group `g`'s cursor item of the shard, read consistently. */
export async function cursorItem(h: Harness): Promise<Record<string, unknown>> {
  const { Item } = await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: cursorPk('g'), sk: SHARD }, ConsistentRead: true }));
  return Item ?? {};
}

/** Completions in `dn`: a whole range's commit is one entry `[number, epoch, n]` for its n members. */
export const completionsIn = (item: Record<string, unknown>) =>
  Object.values((item.dn as Record<string, unknown> | undefined) ?? {}).reduce<number>((sum, d) => sum + (Array.isArray(d) && d.length === 3 ? Number(d[2]) : 1), 0);

/** A FIFO topic `t`, a concurrent group `g`, m1–m60 on shard `k`; `c` a contended container on its own client (`mine`). */
export async function hotShard() {
  const { doc, table } = await testTable();
  const clock = new FakeClock();
  const plain = harness(doc, table, { clock });
  await plain.admin.putTopic('t', build.topic({ type: 'fifo' }));
  await plain.admin.putGroup('g', build.group('t', { deliveryMode: 'concurrent', visibilityTimeoutSeconds: 60 }));
  for (let i = 0; i < 60; i += 10) await plain.queue.sendBatch('t', range(1 + i, 10).map((body) => send(body, { shardKey: 'k' })));
  const mine = createDynamoClients({ endpoint: dynamoEndpoint(), requestTimeoutMs: 10_000 });
  const c = harness(mine.doc, table, { clock, claimContention: contendedClaims([KEY]) });
  return { plain, c, mine, table, doc };
}
