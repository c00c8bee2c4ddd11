/**
 * Completion history for a message's whole retention (docs/design.md,
 * "History for the whole retention"). A cursor keeps its recent completions
 * in `dn`; a claim that finds more than {@link SPILL_AT} there first writes
 * them into history chunks and then removes them from `dn` in its own
 * conditional update. Pure: what to spill, and what a completion proves.
 *
 * The cursor's history mark `hw` says: every completion with a sequence
 * number up to `hw` is in a chunk or still in `dn`. Chunks are consecutive
 * and disjoint: the one spilled at mark X covers (X, H], starts at X + 1 and
 * holds every completion of that range the cursor knew when it was planned.
 * A sequence number of that range that was then still leased (a *hole*)
 * completes later into `dn` as a *straggler* (its seq is ≤ `hw`) and is
 * spilled into an item of its own. Completions are written once and never
 * change, so a chunk planned from any snapshot of the cursor states facts.
 */
import { RANGE_MAX_MESSAGES, deliveriesOfToken, seekEpochOfToken, type CursorState, type DoneEntry } from './cursor.js';
import { Limits } from './model.js';

/** A claim spills when the cursor holds more completions than this (keeps the cursor item, and every write of it, small). */
export const SPILL_AT = 48;
/** The most completions one chunk holds (packed, ≈ 7 bytes each: one chunk stays ≤ 1 KB, one write unit). */
export const CHUNK_MAX_ENTRIES = 100;
/** The most stragglers one claim spills (each is a write of its own); the rest wait for the next claim. */
export const STRAGGLERS_MAX = 8;
/**
 * A chunk stops below the lowest message still leased above the mark (a hole there would complete
 * later as a straggler: a write of its own) until the cursor holds more completions than this …
 */
export const SPILL_HOLES_AT = 2 * SPILL_AT;
/** … and is spilled below it only when it holds at least this many (not a small chunk every claim). */
export const CHUNK_MIN_BELOW_LEASES = SPILL_AT / 2;

/** What one claim moves from `dn` into history, written before the claim's update. */
export interface Spill {
  /** The mark the plan read (undefined: none yet, i.e. 0). */
  expectMark: number | undefined;
  /** The chunk (X, H]: its first sequence number X + 1, its last H, and the completions it holds. */
  chunk: { first: number; last: number; entries: DoneEntry[] } | undefined;
  /** Completions below the mark, each spilled into an item of its own. */
  stragglers: DoneEntry[];
}

/** The mark a cursor without one has: nothing spilled yet. */
export const markOf = (cursor: Pick<CursorState, 'historyMark'>): number => cursor.historyMark ?? 0;

/**
 * What a claim planned from `cursor` spills: nothing while `dn` holds at most
 * {@link SPILL_AT} completions; else the lowest ≤ {@link CHUNK_MAX_ENTRIES}
 * completions above the mark as one chunk that ends at the highest of them,
 * and up to {@link STRAGGLERS_MAX} stragglers. Up to {@link SPILL_HOLES_AT}
 * completions the chunk ends below the lowest message leased above the mark,
 * and is left for a later claim while it would hold fewer than
 * {@link CHUNK_MIN_BELOW_LEASES}: with many consumers of one shard, a chunk
 * across leases in flight made nearly every message a straggler, and every
 * contending claim wrote the same items again (docs/design.md, History).
 */
export function planSpill(cursor: CursorState): Spill | undefined {
  if (cursor.done.size <= SPILL_AT) return undefined;
  const mark = markOf(cursor);
  const done = [...cursor.done.values()].sort((a, b) => a.seq - b.seq);
  const spans = [...(cursor.storedKeys?.values() ?? []), ...done.flatMap((d) => (d.run ? [d.run] : []))];
  const stragglers = wholeRuns(done.filter((d) => d.seq <= mark), STRAGGLERS_MAX, spans);
  const lowestLeased = cursor.done.size > SPILL_HOLES_AT ? Infinity : Math.min(...[...cursor.leases.keys()].filter((seq) => seq > mark));
  const below = done.filter((d) => d.seq > mark && d.seq < lowestLeased);
  const above = wholeRuns(below.length >= CHUNK_MIN_BELOW_LEASES ? below : [], CHUNK_MAX_ENTRIES, spans);
  if (above.length === 0 && stragglers.length === 0) return undefined;
  const last = above[above.length - 1];
  // Every completion in (mark, last] is in `above`: it takes the lowest ones, and `dn` holds all
  // that are not yet spilled; a seq of the range still leased completes later as a straggler.
  const chunk = last ? { first: mark + 1, last: last.seq, entries: above } : undefined;
  return { expectMark: cursor.historyMark, chunk, stragglers };
}

/** When history items written at `now` (ms) expire (epoch s): kept for the longest retention. */
export const historyTtl = (now: number): number => Math.ceil(now / 1000) + Limits.retentionMaxSeconds;

/** Completions a range claim's spill is due at beyond {@link SPILL_AT}: one more step of this many. */
export const SPILL_STEP = SPILL_AT / 2;

/** The step of the completions `dn` holds: -1 up to {@link SPILL_AT}, then 0, 1, … every {@link SPILL_STEP}. */
const spillLevel = (completions: number): number => (completions <= SPILL_AT ? -1 : Math.floor((completions - SPILL_AT - 1) / SPILL_STEP));

/**
 * Whether the commit of a whole range that added `added` completions, leaving `after` in `dn`, is
 * the one that spills (docs/design.md, Range claims, "Who spills"): the one that took `dn` past
 * {@link SPILL_AT}, or past a further {@link SPILL_STEP}. DynamoDB applies writes of one item one
 * after the other, so exactly one commit crosses each step: every grantor that read the same
 * completions spilled them before, all but one in vain.
 */
export const commitSpills = (after: number, added: number): boolean => spillLevel(after) > spillLevel(after - added);

/**
 * Completions past which a grant spills them itself (docs/design.md, Range claims, "Who spills"):
 * the commits that cross a step spill first; this is for a cursor whose crossing commit spilled
 * nothing (a chunk too small below the leases) or never ran it (its container stopped).
 */
export const GRANT_SPILLS_AT = SPILL_HOLES_AT + SPILL_STEP;

/**
 * The first `most` of `sorted` completions, and those up to the end of every run (a whole range's
 * commit, stored as one entry: docs/design.md, Range claims) the cut would split — a run shown by
 * its members or only by its key, replaced by later completions (`spans`): keys that share a number
 * leave `dn` only together (cursor-item.ts `completionKeys`), so a cut inside one would leave them
 * all, and the next spill would cut there again. At most RUN_EXTENSION_MAX more.
 */
function wholeRuns(sorted: DoneEntry[], most: number, spans: ReadonlyArray<{ start: number; n: number }>): DoneEntry[] {
  const taken = sorted.slice(0, most);
  const last = taken[taken.length - 1];
  if (last === undefined) return taken;
  const reach = cutOutside(last.seq + 1, spans, 'up');
  const more = sorted.slice(most).filter((d) => d.seq < reach);
  if (more.length <= RUN_EXTENSION_MAX) return [...taken, ...more];
  // Runs of several seek epochs chained past the bound (a spill's expression is bounded): cut below
  // where the chain starts instead.
  const floor = cutOutside(last.seq, spans, 'down');
  return taken.filter((d) => d.seq < floor);
}

/**
 * A cut at `at` (numbers below it on one side) moved up past the end, or down to the start, of every
 * span it would split, and of the spans that move meets in turn (runs chained over one another).
 */
function cutOutside(at: number, spans: ReadonlyArray<{ start: number; n: number }>, direction: 'up' | 'down'): number {
  let cut = at;
  for (let moved = true; moved; ) {
    moved = false;
    for (const span of spans) {
      if (span.start < cut && span.start + span.n > cut) {
        cut = direction === 'up' ? span.start + span.n : span.start;
        moved = true;
      }
    }
  }
  return cut;
}

/** The most completions a cut is taken on by to keep runs whole (a spill's expression at its largest is tested with these). */
export const RUN_EXTENSION_MAX = 2 * (RANGE_MAX_MESSAGES - 1);

/** The mark after a spill. */
export const markAfter = (spill: Spill): number => spill.chunk?.last ?? spill.expectMark ?? 0;

/** Sequence numbers a spill removes from `dn`. */
export const spilledSeqs = (spill: Spill): number[] => [...(spill.chunk?.entries ?? []), ...spill.stragglers].map((d) => d.seq);

/**
 * Whether a completion answers a commit of `token` as its repeat: committed,
 * by the delivery the token was issued for. Only a message's latest lease can
 * complete it, and within a seek epoch each lease has its own delivery count;
 * a seek restarts the count and bumps the epoch, so (seq, epoch, deliveries)
 * names the handle (docs/design.md, Seek). Older entries also kept the token
 * itself, and then it must match.
 */
export const repeatsCommit = (done: DoneEntry | undefined, token: string): boolean =>
  done !== undefined &&
  done.outcome === 'committed' &&
  done.deliveries === deliveriesOfToken(token) &&
  (done.epoch ?? 0) === seekEpochOfToken(token) &&
  (done.token === undefined || done.token === token);
