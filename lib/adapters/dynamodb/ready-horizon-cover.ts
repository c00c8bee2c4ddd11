/**
 * What keeps the ready index's horizon true (ready-horizon.ts; docs/design.md, Ready index, "The
 * horizon"): a middleware on the document client that, before a request writes a shard cursor's
 * ready-index entry — SETs `g1sk`, or `g1pk` alone (moves an entry to another index key), in an
 * UpdateItem, a PutItem or a transaction item — covers the entry's group for its due time. It reads
 * the request, not its caller, so no writer can leave it out.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { groupOfCursorPk, readyAtOfKey } from './keys.js';
import type { ReadyHorizon } from './ready-horizon.js';

/** A string attribute in document (`'x'`) or marshalled (`{ S: 'x' }`) shape. */
const text = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'object' && v !== null && typeof (v as { S?: unknown }).S === 'string' ? (v as { S: string }).S : undefined;

/** One write of a request: an Update (its expression) or a Put (its item). */
interface ItemWrite {
  TableName?: string;
  Key?: Record<string, unknown>;
  Item?: Record<string, unknown>;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** The `name = operand` assignments of an UpdateExpression, names resolved. */
function* assignments(write: ItemWrite): Generator<{ name: string | undefined; operand: string }> {
  for (const m of (write.UpdateExpression ?? '').matchAll(/([#\w]+)\s*=\s*([^,\s]+(?:\([^)]*\))?)/g)) {
    const name = (m[1] ?? '').startsWith('#') ? write.ExpressionAttributeNames?.[m[1] ?? ''] : m[1];
    yield { name, operand: m[2] ?? '' };
  }
}

/**
 * The ready-index keys an UpdateExpression SETs `g1sk` to (none for most writes). Every such SET
 * must take one placeholder (`g1sk = :v`); any other form is refused, as a write whose due the
 * horizon could not know.
 */
export function readyKeysSet(write: ItemWrite): string[] {
  const keys: string[] = [];
  for (const { name, operand } of assignments(write)) {
    if (name !== 'g1sk') continue;
    const value = /^:\w+$/.test(operand) ? text(write.ExpressionAttributeValues?.[operand]) : undefined;
    if (value === undefined) throw new Error(`a ready-index write the horizon cannot read: SET g1sk = ${operand}`);
    keys.push(value);
  }
  return keys;
}

/**
 * Whether an UpdateExpression SETs `g1pk` (in any form): an entry it moves to another index key
 * keeps its `g1sk`, which may be due already — under a key a quiet look did not find it under.
 */
export const movesReadyKey = (write: ItemWrite): boolean => [...assignments(write)].some(({ name }) => name === 'g1pk');

/**
 * Per (table, group): the latest due of the ready-index entries a request writes (an UpdateItem,
 * a PutItem or a TransactWriteItems; shard cursors only: `C#<group>` items carrying `g1sk`). A
 * ready-now key is due when it is written: 0 here, which {@link ReadyHorizon.cover} takes as its
 * now; so is an entry moved to another key (`g1pk` set, `g1sk` left as it was: it may be due
 * already, and it is new to the key it moves to).
 */
export function readyDuesOf(input: Record<string, unknown>): Array<{ table: string; group: string; due: number }> {
  // Reads (most requests) write nothing: no parsing on their path.
  if (input.UpdateExpression === undefined && input.Item === undefined && input.TransactItems === undefined) return [];
  const writes: ItemWrite[] = [];
  const items = input.TransactItems as Array<Record<string, ItemWrite | undefined>> | undefined;
  if (Array.isArray(items)) for (const item of items) writes.push(...[item.Update, item.Put].filter((w): w is ItemWrite => w !== undefined));
  else writes.push(input as ItemWrite);
  const dues = new Map<string, { table: string; group: string; due: number }>();
  for (const write of writes) {
    const pk = text(write.Key?.pk ?? write.Item?.pk);
    if (pk === undefined || !pk.startsWith('C#') || write.TableName === undefined) continue;
    let due: number | undefined;
    if (write.Item) {
      const key = text(write.Item.g1sk);
      if (key !== undefined) due = readyAtOfKey(key);
    } else {
      const keys = readyKeysSet(write);
      if (keys.length > 0) due = Math.max(...keys.map(readyAtOfKey));
      else if (movesReadyKey(write)) due = 0;
    }
    if (due === undefined) continue;
    const group = groupOfCursorPk(pk);
    const at = `${write.TableName}\u0000${group}`;
    dues.set(at, { table: write.TableName, group, due: Math.max(due, dues.get(at)?.due ?? -Infinity) });
  }
  return [...dues.values()];
}

/**
 * The horizons of each middleware stack, per table: a client shared by several tables' stores covers
 * each, and document clients made from one low-level client share its stack.
 */
const horizonsOf = new WeakMap<object, Map<string, ReadyHorizon>>();
const MIDDLEWARE = 'sluiceReadyHorizon';

/**
 * Covers every ready-index write sent through `doc` to `horizon`'s table: a middleware that, before
 * a request that sets `g1sk` or `g1pk` on a shard cursor is sent, awaits {@link ReadyHorizon.cover} of its
 * group for the entry's due time. A request it cannot read (a `g1sk` set from anything but a
 * placeholder) fails before it is sent.
 */
export function coverReadyWrites(doc: DynamoDBDocumentClient, horizon: ReadyHorizon): void {
  let horizons = horizonsOf.get(doc.middlewareStack);
  if (!horizons) {
    const known = new Map<string, ReadyHorizon>();
    horizons = known;
    horizonsOf.set(doc.middlewareStack, known);
    doc.middlewareStack.add(
      (next) => async (args) => {
        const input = (args as { input?: unknown }).input;
        if (input && typeof input === 'object') {
          await Promise.all(
            readyDuesOf(input as Record<string, unknown>).map(async ({ table, group, due }) => {
              await known.get(table)?.cover(group, due);
            }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name: MIDDLEWARE, priority: 'high' },
    );
  }
  horizons.set(horizon.table, horizon);
}
