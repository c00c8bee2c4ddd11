/**
 * Holes in a sequenced stream, and what a reader does about them (docs/design.md, "Sequenced FIFO
 * topics", the gap rule). A sequenced stream's writers take their numbers from a counter (a grant
 * `[start, start + count)`) and put their segment at `start`, write-once. A number granted and not
 * (yet) written is a hole: its writer may still be on its way, or dead. One pure function decides,
 * for every reader, whether a gap below the next stored item is passed, held, or filled.
 */

/** F: a grant this old whose segment has not landed is filled by the first reader that meets it. */
export const FILL_AFTER_MS = 2_000;
/** W: a writer sends no put for a grant older than this (its own clock); it fills its range and takes a new grant. */
export const GRANT_PUT_DEADLINE_MS = 10_000;
/**
 * L: every put of a grant has landed or failed this long after the grant (W, plus the SDK's 3
 * attempts of at most 2 s to connect and 5 s idle each, with back-off: ≈ 32 s, leaving ≈ 28 s for
 * clock skew between containers): the same "no request outlives 60 s" bound as a chained stream's
 * closing head (stream-log.ts `HEAD_MARGIN_MS`).
 */
export const GRANT_DEAD_AFTER_MS = 60_000;

/**
 * A claim held below a hole looks at the shard again this soon at the latest (the hole's segment
 * usually lands within a round trip; its notice raises nothing once a later one announced more).
 */
export const HOLE_RECHECK_MS = 250;
/** A hole with no known bound (held up to L) is looked at this often: its writer is most likely dead. */
export const UNBOUNDED_HOLE_RECHECK_MS = 2_000;
/** How soon a claim held for `heldForMs` looks again. */
export const holeRecheckMs = (heldForMs: number): number => (heldForMs <= FILL_AFTER_MS ? HOLE_RECHECK_MS : UNBOUNDED_HOLE_RECHECK_MS);

/**
 * A bounded gap this old is passed without a filler: the shortest retention (300 s), so only gaps
 * of segments deleted by TTL (or written so long ago) qualify.
 */
export const GRANT_PASS_AFTER_MS = 300_000;

/** What a reader needs of a stored item of a sequenced stream (a segment or a filler). */
export interface GrantedItem {
  /** Its first sequence number (the key). */
  seq: number;
  /** When the counter granted its range (ms, the granting writer's clock; a filler: the filled grant's). */
  grantedAt: number;
  /** The grant just below it, as its own grant found the counter (`[prev.seq, seq)` granted at `prev.at`); absent for an epoch's first grant and for fillers. */
  prev?: { seq: number; at: number } | undefined;
  /** The first number of its epoch: everything below belongs to an older epoch, dead. */
  epoch: number;
}

/**
 * - `pass`: nothing below the item can still be written; read on from it.
 * - `hold`: a number below it may still be written; read nothing past the gap before `until`.
 * - `fill`: the grant `[from, from + count)` is dead or late: put a filler there (write-once; when
 *   the put fails, its writer's segment landed after all), then decide again.
 */
export type GapState =
  | { kind: 'pass' }
  | { kind: 'hold'; until: number }
  | { kind: 'fill'; from: number; count: number; grantedAt: number };

/**
 * The gap `[at, item.seq)` a reader at `at` (the end of what it passed, or its cursor's next number)
 * faces when the next stored item starts above it. Safe because the counter hands out contiguous
 * ranges and `prev` names the one below the item exactly: its writer puts at `prev.seq` only, the
 * one key a filler takes; a gap with no such bound is passed only when every number in it was
 * granted `L` ago (grants are ordered in time: all of it came before the item's own grant).
 */
export function gapState(at: number, item: GrantedItem, now: number): GapState {
  const from = Math.max(at, item.epoch);
  if (from >= item.seq) return { kind: 'pass' }; // an older epoch, dead; or no gap at all
  const { prev } = item;
  if (prev !== undefined && prev.seq >= from && prev.seq < item.seq) {
    // Granted so long ago that only segments deleted by TTL leave such gaps (the shortest retention):
    // passed without a write. Younger dead grants are filled, so that a put that comes back later
    // than every bound (a container frozen mid-call and thawed) meets a filler, not a passed number.
    if (now - prev.at >= GRANT_PASS_AFTER_MS) return { kind: 'pass' };
    if (now - prev.at < FILL_AFTER_MS) return { kind: 'hold', until: prev.at + FILL_AFTER_MS };
    return { kind: 'fill', from: prev.seq, count: item.seq - prev.seq, grantedAt: prev.at };
  }
  // No bound below the item (a filler, or two dead grants in a row): wait until nothing below can land.
  const until = item.grantedAt + GRANT_DEAD_AFTER_MS;
  return now >= until ? { kind: 'pass' } : { kind: 'hold', until };
}
