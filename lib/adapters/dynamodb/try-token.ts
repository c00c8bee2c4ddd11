/**
 * A try token for a conditional PutItem sent on its own (docs/design.md, Append, "A put that
 * landed, retried"). The SDK retries a call whose answer it did not get (a timeout, a reset); when
 * the put had landed, its retry meets its own item and a condition such as
 * `attribute_not_exists(pk)` fails as if another writer had been first. With a random token on
 * the item and `OR tk = :tk` on the condition, the retry writes the same item again and passes,
 * while any other try (another token, or none) is judged by the condition as before. Transactions
 * need none: the SDK keeps their `ClientRequestToken` across its retries.
 */
import { randomBytes } from 'node:crypto';

/** The attribute naming the try that wrote an item. */
export const TRY_TOKEN = 'tk';
/**
 * Random bytes of a token, stored as binary (billed 2 + 6 bytes): it only has to tell this try
 * from the others writing the same key at the same time (2^-48).
 */
export const TRY_TOKEN_BYTES = 6;
/** The bytes a token adds to an item (for item budgets). */
export const TRY_TOKEN_ITEM_BYTES = TRY_TOKEN.length + TRY_TOKEN_BYTES;

interface ConditionalPut {
  Item?: Record<string, unknown>;
  ConditionExpression?: string;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** A fresh token, as stored (binary). */
export const newTryToken = (): Uint8Array => new Uint8Array(randomBytes(TRY_TOKEN_BYTES));

/** `put` with a fresh try token on its item and its condition (a put without a condition is returned as is). */
export function withTryToken<P extends ConditionalPut>(put: P): P {
  if (put.ConditionExpression === undefined) return put;
  const token = newTryToken();
  return {
    ...put,
    Item: { ...put.Item, [TRY_TOKEN]: token },
    ConditionExpression: `(${put.ConditionExpression}) OR ${TRY_TOKEN} = :tk`,
    ExpressionAttributeValues: { ...put.ExpressionAttributeValues, ':tk': token },
  };
}
