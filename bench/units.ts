/**
 * DynamoDB billing rules (AWS developer guide, "Capacity unit consumption"):
 * item sizes from attribute names and values, 1 write unit per started KiB
 * written per item, 1 read unit per started 4 KiB read strongly consistently
 * (half for eventually consistent reads), a query summing its items' sizes.
 */

export type AttributeValue =
  | { S: string }
  | { N: string }
  | { B: Uint8Array }
  | { BOOL: boolean }
  | { NULL: true }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: Uint8Array[] }
  | { L: AttributeValue[] }
  | { M: AttributeMap };
export type AttributeMap = Record<string, AttributeValue>;

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** Numbers: about one byte per two significant digits, plus one. */
const numberBytes = (n: string) => {
  const digits = n.replace(/^[-+]/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
};

export function valueBytes(value: AttributeValue): number {
  if ('S' in value) return utf8(value.S);
  if ('N' in value) return numberBytes(value.N);
  if ('B' in value) return value.B.length;
  if ('BOOL' in value || 'NULL' in value) return 1;
  if ('SS' in value) return value.SS.reduce((n, s) => n + utf8(s), 0);
  if ('NS' in value) return value.NS.reduce((n, s) => n + numberBytes(s), 0);
  if ('BS' in value) return value.BS.reduce((n, b) => n + b.length, 0);
  // Lists and maps: 3 bytes of overhead, 1 byte per element, plus the elements (and a map's names).
  if ('L' in value) return 3 + value.L.reduce((n, v) => n + 1 + valueBytes(v), 0);
  if ('M' in value) return 3 + Object.entries(value.M).reduce((n, [k, v]) => n + 1 + utf8(k) + valueBytes(v), 0);
  return 0;
}

/** An item's size: the sum of its attribute names' and values' sizes. */
export const itemBytes = (item: AttributeMap): number =>
  Object.entries(item).reduce((n, [name, value]) => n + utf8(name) + valueBytes(value), 0);

/** Write request units of one (non-transactional) write of an item of `bytes`. */
export const wruOf = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));

/** Read request units of reading `bytes` (a query sums its items before rounding). */
export const rruOf = (bytes: number, consistent: boolean): number => Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
