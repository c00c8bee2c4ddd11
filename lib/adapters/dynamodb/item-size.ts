/**
 * The size of an item as DynamoDB counts it against the 400 KB item limit
 * (and as it prices writes): attribute names plus values, where a string
 * counts its UTF-8 bytes, a number about one byte per two significant digits
 * plus one, and a map or list 3 bytes plus one per element besides its
 * elements. An estimate that errs high, used to keep items within the budgets
 * of docs/design.md (Limits by construction).
 */
export function itemBytes(item: Record<string, unknown>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    total += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  }
  return total;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') {
    const digits = String(value).replace(/[-.]|e.*$/gi, '').replace(/^0+|0+$/g, '').length;
    return Math.ceil(Math.max(1, digits) / 2) + 1;
  }
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return 3 + [...value].reduce((n: number, v) => n + valueBytes(v) + 1, 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + valueBytes(v) + 1, 0);
  if (typeof value === 'object') {
    let n = 3;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      n += Buffer.byteLength(k, 'utf8') + valueBytes(v) + 1;
    }
    return n;
  }
  return 0;
}
