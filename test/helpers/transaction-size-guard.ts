/**
 * DynamoDB's 4 MB aggregate of a transaction's items, which DynamoDB Local does not enforce (a probe
 * on 2026-12-04 accepted 13 updates of 350 KB items in one TransactWriteItems): before each
 * TransactWriteItems sent through `client` (or a document client on it), every item it names is read through `reader` (a client
 * without this middleware, consistently) and the call is refused with a ValidationException, as
 * DynamoDB refuses it, when their sizes pass 4 MB — the item a Put writes, the stored item an
 * Update, Delete or ConditionCheck names (an update changes its item by a few bytes here).
 */
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { itemBytes } from '../../lib/adapters/dynamodb/item-size.js';

/** DynamoDB's aggregate: 4 MB. */
export const DYNAMODB_TRANSACTION_BYTES = 4 * 1024 * 1024;

export interface TransactionSizeGuard {
  /** The largest aggregate a transaction sent so far took (bytes), refused ones included. */
  largest: number;
  /** Transactions refused for their size. */
  refused: number;
}

type Marshalled = Record<string, AttributeValue>;
const TYPE_KEYS = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);
/** The input as the document client passes it on (plain values) or as the low-level client sends it. */
const marshalled = (item: Record<string, unknown>): item is Marshalled =>
  Object.values(item).every((v) => typeof v === 'object' && v !== null && Object.keys(v).length === 1 && TYPE_KEYS.has(Object.keys(v)[0]!));
interface TransactItem {
  Put?: { TableName?: string; Item?: Marshalled };
  Update?: { TableName?: string; Key?: Marshalled };
  Delete?: { TableName?: string; Key?: Marshalled };
  ConditionCheck?: { TableName?: string; Key?: Marshalled };
}

export function guardTransactionSize(client: DynamoDBClient, reader: DynamoDBClient): TransactionSizeGuard {
  const guard: TransactionSizeGuard = { largest: 0, refused: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      const items = (args.input as { TransactItems?: TransactItem[] }).TransactItems ?? [];
      const sizes = await Promise.all(
        items.map(async (t) => {
          if (t.Put?.Item) return itemBytes(marshalled(t.Put.Item) ? unmarshall(t.Put.Item) : t.Put.Item);
          const named = t.Update ?? t.Delete ?? t.ConditionCheck;
          if (!named?.Key || !named.TableName) return 0;
          const { Item } = await reader.send(new GetItemCommand({ TableName: named.TableName, Key: marshalled(named.Key) ? named.Key : (marshall(named.Key) as unknown as Marshalled), ConsistentRead: true }));
          return Item ? itemBytes(unmarshall(Item)) : 0;
        }),
      );
      const bytes = sizes.reduce((a, b) => a + b, 0);
      guard.largest = Math.max(guard.largest, bytes);
      if (bytes > DYNAMODB_TRANSACTION_BYTES) {
        guard.refused++;
        throw Object.assign(new Error('Transaction request cannot exceed the 4 MB aggregate size of its items.'), { name: 'ValidationException', $fault: 'client' });
      }
      return next(args);
    },
    { step: 'serialize', priority: 'high', name: 'transactionSizeGuard' },
  );
  return guard;
}
