/**
 * How many messages a consumer group has dead-lettered: a running count in
 * {@link DEAD_LETTER_COUNT_KEYS} counter items (`L#<group>#<n>`, sk the
 * group's 13-digit `createdAt`, attribute `c`), one of them incremented in
 * the transaction that copies a message to the dead-letter topic and closes
 * its lease (receiver.ts `deadLetter`), so the count and the copies never
 * disagree. The group's `deadLettered` figure is their sum less the group's
 * redriven messages (redrives.ts `rv`).
 *
 * Why counters and not the cursors' own `dl` (which earlier versions summed):
 * a FIFO group keeps a cursor per shard key it touched, idle ones for 15
 * days, so a sum over cursors reads every one of them — 10^6 cursors, ≈ 61,000
 * RRU, at every GET and every minute in `group-metrics` (docs/design.md,
 * Per-group metrics, "Figures of a group over very many shards"). The
 * counters are read in one BatchGetItem of 8 keys, whatever the group's size
 * (4 RRU eventually consistent, as the per-minute metrics read them; 8 RRU
 * consistent, as `GET /v1/groups/{g}` does). Why 8 keys: a dead-letter storm
 * (a consumer failing everything) writes one counter per dead letter, and one
 * partition key takes about 1,000 WCU/s, 500 transactional writes a second;
 * 8 keys chosen at random take 4,000 a second, about what the dead-letter
 * topic's own appends take (a standard topic of 4 partitions; docs/performance.md, Scale).
 *
 * The sort key is the group's creation time: a group deleted and created
 * again under its name starts at 0 even if a dead-letter transaction of the
 * old group lands after the delete (it increments the old group's items,
 * which the delete removes when it can and nothing reads).
 */
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetPages, call } from './call.js';
import { deadLetterCountKey } from './keys.js';
import type { TransactItem } from './write-batch.js';

/** Counter items per group (partition keys the increments spread over). */
export const DEAD_LETTER_COUNT_KEYS = 8;

export class DeadLetterCounts {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The increment of one of the group's counters (`pick` ∈ [0, 1) chooses which), for the dead-letter transaction. */
  countItem(group: string, createdAt: number, pick: number): TransactItem {
    const n = Math.min(DEAD_LETTER_COUNT_KEYS - 1, Math.max(0, Math.floor(pick * DEAD_LETTER_COUNT_KEYS)));
    return {
      Update: {
        TableName: this.table,
        Key: deadLetterCountKey(group, createdAt, n),
        UpdateExpression: 'ADD c :one',
        ExpressionAttributeValues: { ':one': 1 },
      },
    };
  }

  /** Dead letters the group (created at `createdAt`) has made: one BatchGetItem of its counters (8 RRU consistent, 4 not). */
  async total(group: string, createdAt: number, consistent = true): Promise<number> {
    let total = 0;
    for await (const items of batchGetPages(this.doc, this.table, this.keys(group, createdAt), { consistent })) for (const item of items) total += Number(item.c ?? 0);
    return total;
  }

  /** Deletes a deleted group's counters (8 DeleteItem calls). */
  async remove(group: string, createdAt: number): Promise<void> {
    await Promise.all(this.keys(group, createdAt).map((Key) => call(() => this.doc.send(new DeleteCommand({ TableName: this.table, Key })))));
  }

  private keys(group: string, createdAt: number): Array<{ pk: string; sk: string }> {
    return Array.from({ length: DEAD_LETTER_COUNT_KEYS }, (_, n) => deadLetterCountKey(group, createdAt, n));
  }
}
