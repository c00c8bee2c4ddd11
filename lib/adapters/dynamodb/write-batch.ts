/**
 * Writes that must happen together — a dedup marker with its message, a
 * deferred item's release with the append, a cursor's completion with the
 * commit's outputs — go into one {@link WriteBatch}. Each item carries a name
 * the caller chose, and a failed condition comes back as that name
 * ({@link ItemConditionFailedError}), so no caller counts positions in a
 * transaction. A batch is written with stream segments by
 * `StreamLog.append`/`appendMany`, or alone by {@link BatchWriter}.
 */
import { withTryToken } from './try-token.js';
import { PutCommand, TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { cancellationReasons, isConditionalFailure, translateDynamoError } from './errors.js';

/** One item of a DynamoDB transaction (Put, Update, Delete or ConditionCheck). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Named items, written all or nothing. */
export class WriteBatch {
  private readonly entries: Array<{ name: string; item: TransactItem }> = [];

  /** Adds `item` under `name`, which must be new to the batch. */
  add(name: string, item: TransactItem): this {
    if (this.entries.some((e) => e.name === name)) throw new Error(`write batch item '${name}' added twice`);
    this.entries.push({ name, item });
    return this;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The items in the order they were added. */
  get items(): TransactItem[] {
    return this.entries.map((e) => e.item);
  }

  /** The name of the item at `index` of {@link items}. */
  nameAt(index: number): string {
    return this.entries[index]?.name ?? `#${index}`;
  }
}

/** The item named `item` failed its condition; nothing of its batch was written. */
export class ItemConditionFailedError extends Error {
  constructor(readonly item: string) {
    super(`write batch item '${item}' failed its condition`);
    this.name = 'ItemConditionFailedError';
  }
}

/**
 * The first item of a failed write that failed its own condition (`offset`:
 * where the batch starts among the transaction's items), or undefined.
 */
export function failedItem(error: unknown, batch: WriteBatch, offset: number): ItemConditionFailedError | undefined {
  const reasons = cancellationReasons(error);
  if (!reasons) return undefined;
  const index = reasons.findIndex((code, i) => i >= offset && code === 'ConditionalCheckFailed');
  return index >= 0 ? new ItemConditionFailedError(batch.nameAt(index - offset)) : undefined;
}

/** Writes a batch that has no stream segment with it. */
export class BatchWriter {
  constructor(private readonly doc: DynamoDBDocumentClient) {}

  /**
   * One request, all or nothing: a batch of a single Put is a PutItem (half
   * the price of a transaction), anything else one TransactWriteItems. Throws
   * {@link ItemConditionFailedError} naming the item whose condition failed.
   */
  async write(batch: WriteBatch): Promise<void> {
    const [only] = batch.items;
    try {
      if (batch.size === 1 && only?.Put) {
        try {
          // A try token: the SDK's retry of a put that landed passes on its own item (try-token.ts).
          await this.doc.send(new PutCommand(withTryToken(only.Put)));
        } catch (error) {
          if (isConditionalFailure(error)) throw new ItemConditionFailedError(batch.nameAt(0));
          throw error;
        }
      } else {
        try {
          await this.doc.send(new TransactWriteCommand({ TransactItems: batch.items }));
        } catch (error) {
          throw failedItem(error, batch, 0) ?? error;
        }
      }
    } catch (error) {
      if (error instanceof ItemConditionFailedError) throw error;
      throw translateDynamoError(error);
    }
  }
}
