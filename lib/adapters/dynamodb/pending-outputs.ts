/**
 * Pending outputs: the `publish` entries of a protected-mode commit that went
 * pending (docs/design.md, Protected commits). Written in the transaction
 * that marks the lease pending, read and deleted in the one that completes it.
 *
 *   pk `O#<group>#<stream>`, sk `<seq>` (keys.ts)
 *   p     the publish entries, JSON
 *   ttl   removal (epoch s): after the longest retention
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call } from './call.js';
import { pendingOutputsKey } from './keys.js';
import type { TransactItem } from './write-batch.js';

export class PendingOutputStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Saves the publish outputs of a pending (protected) commit, written with the pending mark. */
  putItem(group: string, stream: string, seq: number, outputs: unknown[], ttlSeconds: number): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: { ...pendingOutputsKey(group, stream, seq), p: JSON.stringify(outputs), ttl: ttlSeconds },
      },
    };
  }

  /** Removes them, written with the completion that publishes them. */
  deleteItem(group: string, stream: string, seq: number): TransactItem {
    return { Delete: { TableName: this.table, Key: pendingOutputsKey(group, stream, seq) } };
  }

  /** The saved outputs of the pending commits `seqs` (missing ones are left out). */
  async get(group: string, stream: string, seqs: number[]): Promise<Map<number, unknown[]>> {
    const out = new Map<number, unknown[]>();
    for (const seq of seqs) {
      const { Item } = await call(() =>
        this.doc.send(new GetCommand({ TableName: this.table, Key: pendingOutputsKey(group, stream, seq), ConsistentRead: true })),
      );
      if (Item) out.set(seq, JSON.parse(String(Item.p)) as unknown[]);
    }
    return out;
  }
}
