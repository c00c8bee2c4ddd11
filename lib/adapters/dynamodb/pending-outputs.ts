/**
 * Pending outputs: the `publish` entries of a protected-mode commit that went
 * pending (docs/design.md, Protected commits). Written in the transaction
 * that marks the lease pending, read and deleted in the one that completes it.
 *
 *   pk `O#<group>#<stream>`, sk `<seq>` (keys.ts); more parts at sk `<seq>#<part>`
 *   p     a part of the publish entries' JSON text (`j` = 1 on the first part); items written
 *         before `j` hold a JSON array of whole entries per part
 *   n     (first part) how many parts there are, when more than one
 *   k     the pending lease's token: outputs saved by another lease of that message (a pending
 *         commit a seek or a group delete dropped, its item left to its TTL) are not its
 *   ttl   removal (epoch s): after the longest retention
 *
 * The entries' JSON is cut into parts of at most {@link PART_MAX_BYTES}, so
 * outputs of up to 1 MiB (a whole request) never pass DynamoDB's 400 KB item.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { call } from './call.js';
import { pendingOutputsKey } from './keys.js';
import type { TransactItem } from './write-batch.js';

/** JSON bytes of one part: one entry (≤ 256 KiB body, as base64 text ~342 KB, plus keys and properties) always fits. */
export const PART_MAX_BYTES = 395 * 1024;

/** Saved outputs of one pending commit and how many items hold them. */
export interface SavedOutputs {
  outputs: unknown[];
  parts: number;
}

const partKey = (group: string, stream: string, seq: number, part: number) => {
  const key = pendingOutputsKey(group, stream, seq);
  return part === 0 ? key : { ...key, sk: `${key.sk}#${part}` };
};

/**
 * `outputs` as JSON text cut into parts of at most {@link PART_MAX_BYTES} UTF-8 bytes each (a cut
 * never splits a character): one entry's JSON may be larger than a part, since JSON escapes `"`, `\\`
 * and control characters (a 256 KiB body of quotes is 512 KiB of JSON), so it may span parts.
 */
export function outputParts(outputs: unknown[]): string[] {
  const text = JSON.stringify(outputs);
  const parts: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length;
    const n = pair ? 4 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (bytes + n > PART_MAX_BYTES) {
      parts.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += n;
    if (pair) i++;
  }
  parts.push(text.slice(start));
  return parts;
}

export class PendingOutputStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Saves the publish outputs of a pending (protected) commit, written with the pending mark: one item per part. */
  putItems(group: string, stream: string, lease: { seq: number; token: string }, outputs: unknown[], ttlSeconds: number): TransactItem[] {
    const parts = outputParts(outputs);
    return parts.map((part, i) => ({
      Put: {
        TableName: this.table,
        // `j`: the parts' `p` joined are one JSON text (items without it hold a JSON array per part).
        Item: { ...partKey(group, stream, lease.seq, i), p: part, ...(i === 0 ? { j: 1 } : {}), ...(i === 0 && parts.length > 1 ? { n: parts.length } : {}), k: lease.token, ttl: ttlSeconds },
      },
    }));
  }

  /** Removes them (every part), written with the completion that publishes them. */
  deleteItems(group: string, stream: string, seq: number, parts: number): TransactItem[] {
    return Array.from({ length: parts }, (_, i) => ({ Delete: { TableName: this.table, Key: partKey(group, stream, seq, i) } }));
  }

  /**
   * The saved outputs of the pending leases `leases` (missing ones are left out, and so are outputs
   * another lease of the message saved: a pending commit dropped by a seek or a group delete; items
   * saved before `k` existed count as the lease's).
   */
  async get(group: string, stream: string, leases: ReadonlyArray<{ seq: number; token: string }>): Promise<Map<number, SavedOutputs>> {
    const out = new Map<number, SavedOutputs>();
    const read = async (seq: number, part: number) =>
      (await call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: partKey(group, stream, seq, part), ConsistentRead: true })))).Item;
    for (const { seq, token } of leases) {
      const first = await read(seq, 0);
      if (!first || (first.k !== undefined && first.k !== token)) continue;
      const parts = Number(first.n ?? 1);
      const texts = [String(first.p)];
      for (let part = 1; part < parts; part++) {
        const item = await read(seq, part);
        // Parts are written and deleted in one transaction each: a missing part is not expected.
        if (item) texts.push(String(item.p));
      }
      const outputs = first.j === 1 ? (JSON.parse(texts.join('')) as unknown[]) : texts.flatMap((text) => JSON.parse(text) as unknown[]);
      out.set(seq, { outputs, parts });
    }
    return out;
  }
}
