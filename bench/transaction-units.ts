/**
 * What AWS bills for a `TransactWriteItems`, from the items' sizes before and after it.
 *
 * DynamoDB Local's `ConsumedCapacity` for a transaction is not the sum over its items: a transaction
 * of three 900-byte puts reports 2 write units (AWS: 6), three ~2.9 KB puts report 6 (AWS: 18), four
 * updates that each drop their GSI entry report 2 table and 2 index units (measured on the DynamoDB
 * Local of this repository, 2026-12-01). It reports one item's units, doubled. The bench therefore
 * computes the units itself, by the AWS rules:
 *
 * - every item of a transaction costs two underlying writes: 2 × its write units, each item rounded up
 *   to whole KiB on its own ([DynamoDB transactions, capacity management](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling));
 * - a write's size is the larger of the item before and after it (puts, updates, deletes:
 *   [read and write operations](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html));
 * - a `ConditionCheck` is billed as a write of 2 units per started KiB of the item it checks (measured
 *   against DynamoDB by the dynamodb-conformance suite: "a standalone ConditionCheck costs 2 WCU, billed
 *   as write rather than read"), at least 2;
 * - an index (the table's one GSI, `gsi1`, keys only) is written when an item's index key appears
 *   (a put of the entry), goes (a delete) or changes (both): 1 unit per entry write, doubled inside a
 *   transaction as DynamoDB Local itself counts it — a conservative choice, AWS documents only the
 *   table side.
 *
 * The sizes come from reading every item the transaction names, before and after it, with a client the
 * meter does not count. Under concurrency another writer may change an item between those reads and the
 * transaction; the cost phase runs one worker, so its rows are exact up to that.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { wruOf, itemBytes, type AttributeMap } from './units.js';

/** Reads one item (strongly consistent), uncounted: `undefined` when there is none. */
export type ItemReader = (table: string, key: AttributeMap) => Promise<AttributeMap | undefined>;

/** An `ItemReader` on a client the meter does not instrument. */
export const itemReader =
  (client: DynamoDBClient): ItemReader =>
  async (table, key) => {
    const { Item } = await client.send(new GetItemCommand({ TableName: table, Key: key as never, ConsistentRead: true }));
    return Item as AttributeMap | undefined;
  };

export type TransactKind = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

/** One item of a transaction: its table, its key, and for a put the item written. */
export interface TransactTarget {
  kind: TransactKind;
  table: string;
  key: AttributeMap;
  put?: AttributeMap;
}

export interface TransactionUnits {
  table: number;
  gsi: number;
}

const TABLE_KEYS = ['pk', 'sk'] as const;
const INDEX_KEYS = ['g1pk', 'g1sk'] as const;

/** The items a transaction names, in its order; `asAttributes` turns document-shaped values into attribute maps. */
export function transactTargets(
  items: ReadonlyArray<Partial<Record<TransactKind, { TableName?: string; Key?: Record<string, unknown>; Item?: Record<string, unknown> }>>>,
  asAttributes: (item: Record<string, unknown>) => AttributeMap,
): TransactTarget[] {
  return items.flatMap((entry): TransactTarget[] => {
    for (const kind of ['Put', 'Update', 'Delete', 'ConditionCheck'] as const) {
      const op = entry[kind];
      if (!op) continue;
      const table = op.TableName ?? '';
      if (kind === 'Put') {
        const put = asAttributes(op.Item ?? {});
        const key: AttributeMap = {};
        for (const k of TABLE_KEYS) if (put[k]) key[k] = put[k];
        return [{ kind, table, key, put }];
      }
      return [{ kind, table, key: asAttributes(op.Key ?? {}) }];
    }
    return [];
  });
}

const indexKey = (item: AttributeMap | undefined): string | undefined => {
  if (!item) return undefined;
  const parts = INDEX_KEYS.map((k) => item[k]);
  return parts.every((p) => p !== undefined) ? JSON.stringify(parts) : undefined;
};

const bytes = (item: AttributeMap | undefined): number => (item ? itemBytes(item) : 0);

/**
 * The units of a transaction that succeeded: `before[i]` and `after[i]` are target i's item before
 * and after it (a put's item after it is what it wrote).
 */
export function transactionUnits(targets: readonly TransactTarget[], before: ReadonlyArray<AttributeMap | undefined>, after: ReadonlyArray<AttributeMap | undefined>): TransactionUnits {
  return transactionTargetUnits(targets, before, after).reduce((n, u) => ({ table: n.table + u.table, gsi: n.gsi + u.gsi }), { table: 0, gsi: 0 });
}

/** What {@link transactionUnits} counts, per target: its table units, its index units, and the `g1pk` it leaves and the one it writes (per-key attribution, meter.ts). */
export function transactionTargetUnits(
  targets: readonly TransactTarget[],
  before: ReadonlyArray<AttributeMap | undefined>,
  after: ReadonlyArray<AttributeMap | undefined>,
): Array<TransactionUnits & { indexFrom?: string; indexTo?: string }> {
  return targets.map((t, i) => {
    const old = before[i];
    const now = t.kind === 'Put' ? t.put : t.kind === 'Delete' ? undefined : t.kind === 'ConditionCheck' ? old : after[i];
    const table = 2 * wruOf(Math.max(bytes(old), bytes(now)));
    if (t.kind === 'ConditionCheck') return { table, gsi: 0 };
    const from = indexKey(old);
    const to = indexKey(now);
    if (from === to) return { table, gsi: 0 };
    const pkOf = (item: AttributeMap | undefined) => (item?.g1pk as { S?: string } | undefined)?.S;
    return { table, gsi: 2 * ((from ? 1 : 0) + (to ? 1 : 0)), ...(from ? { indexFrom: pkOf(old) } : {}), ...(to ? { indexTo: pkOf(now) } : {}) };
  });
}
