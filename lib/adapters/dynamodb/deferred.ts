/**
 * Deferred messages: scheduled (and, later, transactional half) messages wait
 * here until they become deliverable (docs/design.md, Scheduled messages).
 *
 *   pk "X#<ulid>", sk "X"   { st: state, tp: topic, r: record, du: dueAt,
 *                             a?: {s: stream, q: seq} once released,
 *                             g1pk "T#<due minute>", g1sk "<13-digit due>#<ulid>" while scheduled }
 *
 * Wake markers remember which timer buckets are armed, so a send arms a
 * bucket's timer once and the local runtime re-arms them after a restart:
 *
 *   pk "WAKE", sk "s<epoch second>" | "m<epoch minute>"   { ttl }
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MessageRecord } from '../../domain/model.js';
import { call } from './call.js';
import { isConditionalFailure } from './errors.js';
import { fromStored, toStored, type StoredRecord } from './records.js';
import type { TransactItem } from './stream-log.js';
import { GSI1 } from './table.js';

export const DeferredState = { scheduled: 'scheduled', released: 'released', cancelled: 'cancelled' } as const;
export type DeferredState = (typeof DeferredState)[keyof typeof DeferredState];

export interface Deferred {
  id: string;
  state: DeferredState;
  topic: string;
  record: MessageRecord;
  dueAt: number;
  address: { stream: string; seq: number } | undefined;
}

const key = (id: string) => ({ pk: `X#${id}`, sk: 'X' });
export const minuteOf = (ms: number) => Math.floor(ms / 60_000);
const dueSk = (dueAt: number, id: string) => `${Math.floor(dueAt).toString().padStart(13, '0')}#${id}`;
const WAKE_PK = 'WAKE';

const toDeferred = (item: Record<string, unknown>): Deferred => {
  const address = item.a as { s: string; q: number } | undefined;
  return {
    id: String(item.pk).slice(2),
    state: item.st as DeferredState,
    topic: String(item.tp),
    record: fromStored(item.r as StoredRecord),
    dueAt: Number(item.du),
    address: address ? { stream: address.s, seq: address.q } : undefined,
  };
};

export class DeferredStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The put of a new scheduled message (alone, or in a transaction with its dedup marker and keys). */
  scheduleItem(id: string, record: MessageRecord, dueAt: number, retentionSeconds: number): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: {
          ...key(id),
          st: DeferredState.scheduled,
          tp: record.topic,
          r: toStored(record),
          du: dueAt,
          g1pk: `T#${minuteOf(dueAt)}`,
          g1sk: dueSk(dueAt, id),
          // Kept until the released message itself would expire, so queries by id keep working.
          ttl: Math.ceil(dueAt / 1000) + retentionSeconds + 86_400,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  async get(id: string): Promise<Deferred | undefined> {
    const { Item } = await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: key(id), ConsistentRead: true })));
    return Item ? toDeferred(Item) : undefined;
  }

  /** Scheduled messages of a due-minute bucket with `dueAt <= until`, earliest first (GSI: eventually consistent). */
  async due(minute: number, until: number, limit: number): Promise<string[]> {
    const { Items } = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI1,
          KeyConditionExpression: 'g1pk = :pk AND g1sk <= :until',
          ExpressionAttributeValues: { ':pk': `T#${minute}`, ':until': `${Math.floor(until).toString().padStart(13, '0')}#~` },
          Limit: limit,
        }),
      ),
    );
    return (Items ?? []).map((item) => String(item.pk).slice(2));
  }

  /** All due times still scheduled in a minute bucket (to arm its second-level wake-ups). */
  async dueTimes(minute: number): Promise<number[]> {
    const out: number[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: GSI1,
            KeyConditionExpression: 'g1pk = :pk',
            ExpressionAttributeValues: { ':pk': `T#${minute}` },
            ExclusiveStartKey: start,
          }),
        ),
      );
      for (const item of result.Items ?? []) out.push(Number(String(item.g1sk).slice(0, 13)));
      start = result.LastEvaluatedKey;
    } while (start !== undefined);
    return out;
  }

  /** Marks a scheduled message released at `address`; fails its condition unless it is still scheduled. */
  releaseItem(id: string, address: { stream: string; seq: number }): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: key(id),
        UpdateExpression: 'SET st = :released, a = :a REMOVE g1pk, g1sk',
        ConditionExpression: 'st = :scheduled',
        ExpressionAttributeValues: {
          ':released': DeferredState.released,
          ':scheduled': DeferredState.scheduled,
          ':a': { s: address.stream, q: address.seq },
        },
      },
    };
  }

  /** Cancels a scheduled message of `topic`: `done`, or its state when it was not scheduled (undefined if absent). */
  async cancel(id: string, topic: string): Promise<{ done: true } | { done: false; state: DeferredState } | undefined> {
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key(id),
            UpdateExpression: 'SET st = :cancelled REMOVE g1pk, g1sk',
            ConditionExpression: 'st = :scheduled AND tp = :topic',
            ExpressionAttributeValues: { ':cancelled': DeferredState.cancelled, ':scheduled': DeferredState.scheduled, ':topic': topic },
          }),
        ),
      );
      return { done: true };
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      const current = await this.get(id);
      return current && current.topic === topic ? { done: false, state: current.state } : undefined;
    }
  }

  async hasWake(bucket: string): Promise<boolean> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: WAKE_PK, sk: bucket }, ConsistentRead: true })),
    );
    return Item !== undefined;
  }

  /** Records that a timer bucket is armed; false when it already was. */
  async markWake(bucket: string, expiresAt: number): Promise<boolean> {
    try {
      await call(() =>
        this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: { pk: WAKE_PK, sk: bucket, ttl: Math.ceil(expiresAt / 1000) },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /** Armed buckets of one kind (`s` seconds, `m` minutes) from `from` on. */
  async wakes(kind: 's' | 'm', from: number): Promise<number[]> {
    const out: number[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': WAKE_PK, ':from': `${kind}${String(from).padStart(12, '0')}`, ':to': `${kind}~` },
            ExclusiveStartKey: start,
            ConsistentRead: true,
          }),
        ),
      );
      for (const item of result.Items ?? []) out.push(Number(String(item.sk).slice(1)));
      start = result.LastEvaluatedKey;
    } while (start !== undefined);
    return out;
  }
}

export const wakeBucket = (kind: 's' | 'm', n: number) => `${kind}${String(n).padStart(12, '0')}`;
