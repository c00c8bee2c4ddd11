/**
 * Which capacity unit of the capacity model (capacity-model.ts, receive rows) a DynamoDB item or
 * index entry counts on, and what kind of write a cursor update is. Pure functions of the request,
 * used by the meter (meter.ts) to count units per key.
 *
 * Units:
 * - a table partition key (`S#<stream>`, `A#<topic>`, …): one unit per key. Stream segments are
 *   written at the end of an ordered key range, so a key cannot be split by adaptive capacity.
 * - a cursor item (`C#<group>` + `<stream>`): one unit per ITEM, written `C#<group> @ <stream>`.
 *   Cursors are updated in place, and adaptive capacity "isolates frequently accessed items"
 *   on partitions of their own (the table has no LSI, which would prevent the split).
 * - a GSI partition key (`gsi1 R#<group>`, …): one unit per index key; the ready index's sort
 *   keys are times and per-stream hashes written as cursors change.
 */

/** A string attribute in document (`'x'`) or marshalled (`{ S: 'x' }`) shape. */
export const stringValue = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'object' && v !== null && typeof (v as { S?: unknown }).S === 'string' ? (v as { S: string }).S : undefined;

/** Separates a cursor item's partition key from its sort key in a unit's name. */
export const ITEM_SEPARATOR = ' @ ';
/** Prefix of index units. */
export const INDEX_PREFIX = 'gsi1 ';

/** The unit of a table item: its cursor item for `C#…`, else its partition key. */
export function tableUnit(pk: string, sk: string | undefined): string {
  return pk.startsWith('C#') && sk !== undefined ? `${pk}${ITEM_SEPARATOR}${sk}` : pk;
}

/** The unit of a GSI partition key value. */
export const indexUnit = (g1pk: string): string => `${INDEX_PREFIX}${g1pk}`;

export type UnitKind = 'item' | 'index key' | 'table key';
export const unitKind = (unit: string): UnitKind => (unit.startsWith(INDEX_PREFIX) ? 'index key' : unit.includes(ITEM_SEPARATOR) ? 'item' : 'table key');

/** The unit of a key map (`{ pk, sk }`, either shape); undefined without a string `pk`. */
export function keyUnit(key: Record<string, unknown> | undefined): string | undefined {
  const pk = stringValue(key?.pk);
  return pk === undefined ? undefined : tableUnit(pk, stringValue(key?.sk));
}

/** Resolves `#name` / `:value` placeholders of an expression operand. */
const resolveName = (token: string, names: Record<string, string> | undefined) => (token.startsWith('#') ? (names?.[token] ?? token) : token);

/**
 * The partition a Query reads: `gsi1 <g1pk>` on the index, else the table unit of `pk` (a Query on
 * `C#<group>` reads many cursor items: the unit `C#<group> @ *`).
 */
export function queryUnit(input: Record<string, unknown>): string | undefined {
  const expression = typeof input.KeyConditionExpression === 'string' ? input.KeyConditionExpression : '';
  const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const wanted = input.IndexName === undefined ? 'pk' : 'g1pk';
  for (const m of expression.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    if (resolveName(m[1] ?? '', names) !== wanted) continue;
    const value = stringValue(values?.[m[2] ?? '']);
    if (value === undefined) return undefined;
    if (input.IndexName !== undefined) return indexUnit(value);
    return value.startsWith('C#') ? `${value}${ITEM_SEPARATOR}*` : value;
  }
  return undefined;
}

/**
 * The GSI keys an UpdateItem writes: `set` the `g1pk` value it SETs, `removed` when it REMOVEs
 * `g1pk`. Two cases depend on the item, not the request (`fromItem`): a shard cursor's
 * `SET g1pk = if_not_exists(rk, :home)` writes its `rk` when it has one (a wide FIFO topic's
 * bucket, ready-index.ts) and `:home` otherwise (`set` holds `:home`); a REMOVE takes the cursor
 * off the key it had — its `rk`, else its group's ready index `R#<group>` (`removed`).
 * {@link indexKeyOfItem} resolves both from the item as it is after the update.
 */
export function indexWrites(input: Record<string, unknown>): { set?: string; removed?: string; fromItem?: 'set' | 'removed' } {
  const update = typeof input.UpdateExpression === 'string' ? input.UpdateExpression : '';
  const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const out: { set?: string; removed?: string; fromItem?: 'set' | 'removed' } = {};
  for (const m of update.matchAll(/([#\w]+)\s*=\s*(if_not_exists\(\s*[#\w]+\s*,\s*)?(:\w+)/g)) {
    if (resolveName(m[1] ?? '', names) !== 'g1pk') continue;
    out.set = stringValue(values?.[m[3] ?? '']);
    if (m[2] !== undefined) out.fromItem = 'set';
  }
  const remove = /\bREMOVE\b(.*?)(?=\b(?:SET|ADD|DELETE)\b|$)/s.exec(update)?.[1] ?? '';
  if (remove.split(',').some((p) => resolveName(p.trim(), names) === 'g1pk')) {
    const pk = stringValue((input.Key as Record<string, unknown> | undefined)?.pk);
    if (pk?.startsWith('C#')) {
      out.removed = `R#${pk.slice(2)}`;
      out.fromItem = 'removed';
    }
  }
  return out;
}

/** The index key {@link indexWrites} left to the item: the `g1pk` it now has (set), or its `rk` (removed); undefined: keep the request's. */
export function indexKeyOfItem(written: ReturnType<typeof indexWrites>, item: Record<string, unknown> | undefined): string | undefined {
  if (item === undefined || written.fromItem === undefined) return undefined;
  return written.fromItem === 'set' ? stringValue(item.g1pk) : stringValue(item.rk);
}

/**
 * A claim: the receive's conditional cursor update (cursor-updates.ts `claimUpdate`), conditional
 * on the `nx` it read first. The notice cursor's own advance (`advanceUpdate`, condition `nx = :old`)
 * is not a claim.
 */
export function isClaimUpdate(input: Record<string, unknown>): boolean {
  const condition = typeof input.ConditionExpression === 'string' ? input.ConditionExpression : '';
  const pk = stringValue((input.Key as Record<string, unknown> | undefined)?.pk);
  return pk?.startsWith('C#') === true && /^nx = :\w+/.test(condition) && condition !== 'nx = :old';
}

/** A range claim (cursor-updates.ts `grantUpdate`: `nx` moved by arithmetic, `ADD nx`). */
export function isGrantUpdate(input: Record<string, unknown>): boolean {
  const update = typeof input.UpdateExpression === 'string' ? input.UpdateExpression : '';
  return /\bADD nx :\w+/.test(update);
}

/** A FIFO shard raise written on its own (cursor-updates.ts `raiseKnownUpdate`: `kn` moves up to a notice's `to`). */
export function isRaiseUpdate(input: Record<string, unknown>): boolean {
  const condition = typeof input.ConditionExpression === 'string' ? input.ConditionExpression : '';
  return /\bkn < :to\b/.test(condition);
}
