import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BatchGetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ThrottledError } from '../../domain/errors.js';
import { isConditionalFailure, translateDynamoError } from './errors.js';

/** Runs one store call and turns unabsorbed AWS failures into retryable domain errors. */
export async function call<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateDynamoError(error);
  }
}

/**
 * Runs one conditional write: true when it took effect, false when its
 * condition failed (someone else got there first); other failures as {@link call}.
 */
export async function conditional(operation: () => Promise<unknown>): Promise<boolean> {
  try {
    await call(operation);
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/**
 * A conditional write's outcome; on failure, the item as it was (undefined: there was none); on
 * success, the item after it when the input asked for `ReturnValues: 'ALL_NEW'` (no extra capacity).
 */
export type ConditionalResult = { ok: true; item?: Record<string, unknown> } | { ok: false; old: Record<string, unknown> | undefined };

/**
 * Runs one conditional update that, when its condition fails, returns the
 * item's old image (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, no extra
 * read), so the caller can tell which part of the condition failed and
 * decide whether to retry; other failures as {@link call}.
 */
export async function conditionalWithImage(
  doc: DynamoDBDocumentClient,
  input: Omit<UpdateCommandInput, 'ReturnValuesOnConditionCheckFailure'>,
): Promise<ConditionalResult> {
  try {
    const { Attributes } = await call(() => doc.send(new UpdateCommand({ ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
    return Attributes ? { ok: true, item: Attributes } : { ok: true };
  } catch (error) {
    if (!isConditionalFailure(error)) throw error;
    return { ok: false, old: conditionFailureImage(error) };
  }
}

/**
 * The item a failed condition was evaluated against, from a conditional write's error that asked
 * for it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`): undefined when there was none, or when
 * the error is not a failed condition. The document client leaves it marshalled.
 */
export const conditionFailureImage = (error: unknown): Record<string, unknown> | undefined => {
  if (!isConditionalFailure(error)) return undefined;
  const item = (error as { Item?: Record<string, AttributeValue> }).Item;
  return item ? unmarshall(item) : undefined;
};

/**
 * The pages of a Query, one after the other, as {@link call}s; stops when the caller stops
 * iterating or the index has no more. With `limit`, each page asks for (`Limit`) what is still
 * missing of `limit` items in all, and paging stops once they were read.
 */
export async function* queryPages(
  doc: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  limit?: number,
): AsyncGenerator<Record<string, unknown>[]> {
  let found = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await call(() =>
      doc.send(new QueryCommand({ ...input, ...(limit !== undefined ? { Limit: limit - found } : {}), ...(start ? { ExclusiveStartKey: start } : {}) })),
    );
    const items = page.Items ?? [];
    found += items.length;
    yield items;
    start = page.LastEvaluatedKey;
  } while (start !== undefined && (limit === undefined || found < limit));
}

/**
 * The first `pagesMax` pages of a Query, one after the other, each with whether the Query has more
 * (`more`: a page past the last one yielded exists, unread).
 */
export async function* queryPagesUpTo(
  doc: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  pagesMax: number,
): AsyncGenerator<{ items: Record<string, unknown>[]; more: boolean }> {
  let start: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const page = await call(() => doc.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) })));
    pages++;
    start = page.LastEvaluatedKey;
    yield { items: page.Items ?? [], more: start !== undefined };
  } while (start !== undefined && pages < pagesMax);
}

/** Keys per BatchGetItem request (DynamoDB's limit). */
export const BATCH_GET_MAX_KEYS = 100;
/** Rounds of retrying a BatchGetItem's unprocessed keys before answering "busy" (429). */
const BATCH_GET_ROUNDS = 8;

/**
 * The items of `keys` in `table` (only `projection`, if given), as BatchGetItem answers them: 100
 * keys a request, one request after the other, unprocessed keys retried with a growing, capped and
 * jittered wait; still
 * unprocessed after {@link BATCH_GET_ROUNDS} rounds, a {@link ThrottledError} (429).
 */
export async function* batchGetPages(
  doc: DynamoDBDocumentClient,
  table: string,
  keys: readonly Record<string, unknown>[],
  options: { consistent: boolean; projection?: string; names?: Record<string, string> },
): AsyncGenerator<Record<string, unknown>[]> {
  for (let i = 0; i < keys.length; i += BATCH_GET_MAX_KEYS) {
    let left: Record<string, unknown>[] = keys.slice(i, i + BATCH_GET_MAX_KEYS);
    for (let round = 0; left.length > 0; round++) {
      const request = {
        Keys: left,
        ConsistentRead: options.consistent,
        ...(options.projection === undefined ? {} : { ProjectionExpression: options.projection }),
        ...(options.names === undefined ? {} : { ExpressionAttributeNames: options.names }),
      };
      const result = await call(() => doc.send(new BatchGetCommand({ RequestItems: { [table]: request } })));
      yield result.Responses?.[table] ?? [];
      left = (result.UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      if (left.length > 0 && round >= BATCH_GET_ROUNDS) throw new ThrottledError('The message store is busy; retry the request.');
      // A growing wait, capped (a receive reads segments here) and jittered: ≈ 0.5 s over the 8 rounds.
      if (left.length > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(100, 10 * 2 ** round) * (0.5 + Math.random())));
    }
  }
}

/** Every item a Query matches, page after page (admin and timer paths only: it reads the whole collection). */
export async function queryAll(doc: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const items of queryPages(doc, input)) out.push(...items);
  return out;
}
