/**
 * DynamoDB's size limits, and the size of an item as DynamoDB counts it
 * (attribute names plus values), so writes are split by construction before
 * DynamoDB refuses them (docs/design.md, Limits by construction).
 *
 * Sizes follow the DynamoDB developer guide ("Item sizes and formats"):
 * strings count their UTF-8 bytes, binaries their length, a number at most
 * 21 bytes (1 byte per two significant digits plus 1), a boolean or null 1
 * byte, a map or list 3 bytes plus 1 byte per element plus its elements. The
 * estimate rounds up wherever the guide says "approximately".
 */

/** DynamoDB's item size limit (400 KB, names and values). */
export const ITEM_MAX_BYTES = 400 * 1024;
/** Largest stream segment we write: the item limit less room for keys and attributes. */
export const SEGMENT_MAX_BYTES = 350 * 1024;
/** Items in one TransactWriteItems call. */
export const TRANSACTION_MAX_ITEMS = 100;
/**
 * Bytes one transaction may carry: DynamoDB allows an aggregate 4 MB of items;
 * we count 4 MB as 4,000,000 and keep a margin for what the estimate misses.
 */
export const TRANSACTION_MAX_BYTES = 3_900_000;

const NUMBER_MAX_BYTES = 21;

/** Bytes of one attribute value as DynamoDB counts it (an upper estimate for numbers). */
export function valueBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') {
    const digits = String(value).replace(/[^0-9]/g, '').replace(/^0+/, '').length;
    return Math.min(NUMBER_MAX_BYTES, Math.ceil(digits / 2) + 1);
  }
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value instanceof Set) return [...value].reduce<number>((sum, v) => sum + valueBytes(v), 0);
  if (typeof value === 'object') return 3 + itemBytes(value as Record<string, unknown>) + Object.keys(value).length;
  return 0;
}

/** Bytes of an item (or a map's entries): every attribute's name and value; undefined attributes are not stored. */
export function itemBytes(item: Record<string, unknown>): number {
  let sum = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    sum += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  }
  return sum;
}
