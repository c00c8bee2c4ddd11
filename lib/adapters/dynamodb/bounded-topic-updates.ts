/**
 * Keeps a transaction of one group item and many topic-item updates within
 * DynamoDB's 4 MB aggregate by construction (docs/design.md, "A group save's
 * transaction within 4 MB"): a group save or delete touches every topic item
 * it changes (a push group replacing its 20 subscriptions: 40, and its
 * dead-letter topics), and a topic item may hold up to ≈ 358 KB of lists
 * (topic-item-bound.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetPages } from './call.js';
import { ITEM_MAX_BYTES, TRANSACTION_MAX_BYTES } from './item-size.js';
import { TOPIC_PK } from './keys.js';
import { LIST_PIN_CONDITION, TOPIC_ITEMS_AT_WORST, listCountsOf, listPinValues, topicItemBoundBytes, topicItemBoundFromRead, type TopicListCounts } from './topic-item-bound.js';

/** A topic item's update in a transaction, as the catalog builds it. */
export interface TopicUpdate {
  Key: Record<string, unknown>;
  ConditionExpression: string;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** One topic item of a transaction and the names its update adds to its lists (at most). */
export interface BoundedTopicUpdate {
  topic: string;
  update: TopicUpdate;
  adds: Partial<TopicListCounts>;
}

/**
 * Makes the topic updates of a transaction beside one group item (≤ `ITEM_MAX_BYTES`) fit
 * `TRANSACTION_MAX_BYTES`. Up to `TOPIC_ITEMS_AT_WORST` updates fit at their items' maximum size:
 * nothing is read or changed. More are read (one consistent BatchGetItem), each update is made
 * conditional on its item's lists being no longer than read (`LIST_PIN_CONDITION`: a list grown
 * meanwhile fails the transaction, and the caller reads again), and each item is counted at the
 * smaller of two bounds the pins keep, each with what the update adds: its lists' lengths at the
 * longest names (`topicItemBoundBytes`), and its lists' bytes as read (`topicItemBoundFromRead`). When that sum
 * passes the budget, `tooLarge` is thrown with it before anything is written. Returns the bytes counted.
 */
export async function boundTopicUpdates(
  doc: DynamoDBDocumentClient,
  table: string,
  updates: readonly BoundedTopicUpdate[],
  tooLarge: (bytes: number) => Error,
): Promise<number> {
  if (updates.length <= TOPIC_ITEMS_AT_WORST) return 0;
  const { bytes, counts } = await measure(doc, table, updates);
  if (bytes > TRANSACTION_MAX_BYTES) throw tooLarge(bytes);
  for (const { topic, update } of updates) {
    update.ConditionExpression = `(${update.ConditionExpression}) AND ${LIST_PIN_CONDITION}`;
    Object.assign(update.ExpressionAttributeValues, listPinValues(counts.get(topic) ?? listCountsOf(undefined)));
  }
  return bytes;
}

/**
 * The bytes a transaction of one group item and updates of these topic items (with what each adds
 * to its lists) may take as their lists are now: 0 when they fit at their maximum (no read). A
 * service refuses a change over `TRANSACTION_MAX_BYTES` with this before it writes anything; the
 * transaction itself keeps the bound ({@link boundTopicUpdates}).
 */
export async function topicUpdatesBytes(doc: DynamoDBDocumentClient, table: string, updates: ReadonlyArray<Pick<BoundedTopicUpdate, 'topic' | 'adds'>>): Promise<number> {
  if (updates.length <= TOPIC_ITEMS_AT_WORST) return 0;
  return (await measure(doc, table, updates)).bytes;
}

async function measure(
  doc: DynamoDBDocumentClient,
  table: string,
  updates: ReadonlyArray<Pick<BoundedTopicUpdate, 'topic' | 'adds'>>,
): Promise<{ bytes: number; counts: Map<string, TopicListCounts> }> {
  const lists = await readLists(doc, table, updates.map((u) => u.topic));
  let bytes = ITEM_MAX_BYTES;
  for (const { topic, adds } of updates) {
    // Two bounds, both kept by the pins: the lists' lengths at the longest names, and their bytes as read.
    const read = lists.get(topic);
    const counts = listCountsOf(read);
    const atLongest = topicItemBoundBytes({
      pushGroups: counts.pushGroups + (adds.pushGroups ?? 0),
      parked: counts.parked + (adds.parked ?? 0),
      deadLetterGroups: counts.deadLetterGroups + (adds.deadLetterGroups ?? 0),
    });
    bytes += Math.min(atLongest, topicItemBoundFromRead(read, adds));
  }
  return { bytes, counts: new Map([...lists].map(([topic, read]) => [topic, listCountsOf(read)])) };
}

/** The lists of these topic items, read consistently (a missing item: absent). */
async function readLists(doc: DynamoDBDocumentClient, table: string, topics: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const keys = [...new Set(topics)].map((sk) => ({ pk: TOPIC_PK, sk }));
  for await (const items of batchGetPages(doc, table, keys, { consistent: true, projection: 'sk, pg, wb, dg' })) {
    for (const item of items) out.set(String(item.sk), item);
  }
  return out;
}
