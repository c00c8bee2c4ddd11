/**
 * Fixtures of the per-topic limit tests (push groups, dead-letter groups): groups by the hundred
 * cloned from one saved through the service — a save each would take minutes — and the refusal a
 * save at the limit must answer.
 */
import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { GROUP_PK } from '../../lib/adapters/dynamodb/keys.js';
import type { PushSettings } from '../../lib/domain/push.js';
import { DEFAULT_RETRY_POLICY } from '../../lib/domain/retry-policy.js';
import type { Harness } from './stores.js';

/** A group's stored item (consistent read); undefined when there is none. */
export const groupItem = async (h: Harness, name: string) =>
  (await h.doc.send(new GetCommand({ TableName: h.table, Key: { pk: GROUP_PK, sk: name }, ConsistentRead: true }))).Item;

/** Writes copies of `stored` (a group item) under each of `names`, 25 a BatchWriteItem, unprocessed items sent again. */
export async function cloneGroups(h: Harness, stored: Record<string, unknown>, names: readonly string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 25) {
    let left: Array<{ PutRequest: { Item: Record<string, unknown> } }> | undefined = names.slice(i, i + 25).map((sk) => ({ PutRequest: { Item: { ...stored, sk } } }));
    while (left && left.length > 0) {
      const out = await h.doc.send(new BatchWriteCommand({ RequestItems: { [h.table]: left } }));
      left = out.UnprocessedItems?.[h.table] as typeof left;
    }
  }
}

/** A serialized group of topic `orders` as the catalog saves it (`catalog.putGroup`, below the service's checks). */
export const catalogGroup = (name: string, settings: { deadLetterTopic: string; push?: PushSettings | undefined }) => ({
  name,
  subscriptions: [{ topic: 'orders', tags: undefined }],
  deliveryMode: 'serialized' as const,
  visibilityTimeoutSeconds: 30,
  maxDeliveries: 5,
  retryPolicy: DEFAULT_RETRY_POLICY,
  deadLetterTopic: settings.deadLetterTopic,
  push: settings.push,
});

/** The error `promise` fails with, which must be an `ErrorClass`. */
export async function refusalOf<E>(promise: Promise<unknown>, ErrorClass: new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ErrorClass);
  return error as E;
}
