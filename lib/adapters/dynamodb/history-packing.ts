/**
 * The packed form of a history chunk's completions (history.ts): one binary
 * attribute, ~7 bytes per completion, so a chunk of 100 stays below 1 KB (one
 * write unit). Per completion, in sequence order, three unsigned LEB128
 * varints: the sequence number's distance to the previous one (the first to
 * the chunk's first − 1), `deliveries × 4 + outcome` (as in `dn`,
 * cursor-item.ts), and the completion time's zig-zag distance to the chunk's
 * base time `a` in ms. Arithmetic, not bit operations: values reach 2^41.
 * A completion with a seek epoch (cursor-item.ts) writes outcome 3 in the
 * second varint and one more varint after it: `epoch × 4 + outcome`.
 */
import type { DoneEntry, DoneOutcome } from '../../domain/cursor.js';

const OUTCOMES: DoneOutcome[] = ['committed', 'dead-lettered', 'expired'];
const CODES: Record<DoneOutcome, number> = { committed: 0, 'dead-lettered': 1, expired: 2 };
/** The outcome code no outcome uses: the outcome follows, with the seek epoch, in the next varint. */
const EPOCH_FOLLOWS = 3;

const writeVarint = (out: number[], value: number): void => {
  let v = value;
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
};

const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);
const unzigzag = (n: number): number => (n % 2 === 0 ? n / 2 : -(n + 1) / 2);

/** Packs completions (any order; written sorted) of a chunk that starts at `first`, relative to base time `base`. */
export function packHistory(first: number, base: number, entries: readonly DoneEntry[]): Uint8Array {
  const out: number[] = [];
  let previous = first - 1;
  for (const entry of [...entries].sort((a, b) => a.seq - b.seq)) {
    if (entry.seq <= previous) throw new RangeError(`history entry ${entry.seq} is not above ${previous}`);
    writeVarint(out, entry.seq - previous);
    if (entry.epoch) {
      writeVarint(out, entry.deliveries * 4 + EPOCH_FOLLOWS);
      writeVarint(out, entry.epoch * 4 + CODES[entry.outcome]);
    } else writeVarint(out, entry.deliveries * 4 + CODES[entry.outcome]);
    writeVarint(out, zigzag(entry.at - base));
    previous = entry.seq;
  }
  return Uint8Array.from(out);
}

/** The completions of a packed chunk (the inverse of {@link packHistory}). */
export function unpackHistory(first: number, base: number, packed: Uint8Array): DoneEntry[] {
  const entries: DoneEntry[] = [];
  let i = 0;
  const read = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = packed[i++];
      if (byte === undefined) throw new RangeError('truncated history chunk');
      value += (byte % 128) * scale;
      if (byte < 128) return value;
      scale *= 128;
    }
  };
  let seq = first - 1;
  while (i < packed.length) {
    seq += read();
    const code = read();
    const epoch = code % 4 === EPOCH_FOLLOWS ? read() : undefined;
    const outcome = epoch === undefined ? code % 4 : epoch % 4;
    const at = base + unzigzag(read());
    entries.push({
      seq,
      deliveries: Math.floor(code / 4),
      outcome: OUTCOMES[outcome] ?? 'expired',
      at,
      ...(epoch !== undefined && epoch >= 4 ? { epoch: Math.floor(epoch / 4) } : {}),
    });
  }
  return entries;
}
