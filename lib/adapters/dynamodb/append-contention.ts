/**
 * Lost append races (docs/design.md, Append: "Lost races: a time budget and full jitter").
 *
 * A writer that lost an append race waits before its next try, a uniformly random time in
 * [0, min(cap, slot × 2^(level − 1))] ("full jitter"), where `slot` is the time its own losing
 * attempt took (a head read and a put: the time one append holds a stream) and `level` counts the
 * races lost. The level is remembered per stream (per topic for a standard topic's partitions), so
 * the next append there starts where this one ended: a win at the first try lowers it by one, each
 * lost race raises it by one, and it settles where an append loses about once; it fades by one a
 * second once nobody loses there. An append on a stream remembered as contended waits its turn
 * before its first try too. An append answers 429 only when its stream stayed contended for the
 * whole budget (2 s) and it made at least 12 tries: the last wait is cut to what is left of the
 * budget and the last try made.
 */
import { realStopwatch, type Stopwatch } from '../../ports/stopwatch.js';

/** How long one append may keep losing races before it answers 429 Throttled. */
export const APPEND_BUDGET_MS = 2000;
/**
 * … and not before this many tries: a slow store (a loaded DynamoDB Local, calls the SDK retried)
 * gets its chances in tries, not milliseconds — never fewer than the 12 tries appends had before
 * the budget (with 8, the full-size load test met a 429 on a FIFO batch that 12 immediate tries had
 * always placed). On AWS 8 tries with their waits take ≈ 1 s (15 ms a try, waits 7.5 + 15 + … +
 * 480 ms on average) and 12 ≈ 3 s (the next four waits average 500 ms under the 1 s cap), so a
 * stream contended throughout answers 429 after ≈ 3 s; a send makes at most 4 such appends one
 * after another (3 segments, then its notices): ≈ 12 s, inside the send function's 15 s.
 */
export const APPEND_MIN_TRIES = 12;
/** No single wait is longer (≈ 64 contenders × a 15 ms slot). */
export const BACKOFF_CAP_MS = 1000;
/** A slot is at least this (an idle local DynamoDB answers in < 1 ms) … */
export const SLOT_MIN_MS = 2;
/** … and at most this (a call slowed by a loaded machine or a retry inside the SDK says nothing about the stream). */
export const SLOT_MAX_MS = 100;
/** The slot assumed before any attempt on a key was timed: one DynamoDB round trip in a region. */
export const SLOT_DEFAULT_MS = 10;
/** A remembered level fades by one per this many ms without a race there. */
export const LEVEL_FADE_MS = 1000;
/** Levels above this would only repeat the cap. */
const LEVEL_MAX = 12;
/** Keys remembered (the oldest forgotten first). */
export const KEYS_REMEMBERED = 1000;

/** The full-jitter wait before a try at `level` (0: none), in ms; `fraction` is uniform in [0, 1). */
export function fullJitterMs(level: number, slotMs: number, fraction: number): number {
  if (level <= 0) return 0;
  const slot = Math.min(SLOT_MAX_MS, Math.max(SLOT_MIN_MS, slotMs));
  return fraction * Math.min(BACKOFF_CAP_MS, slot * 2 ** (level - 1));
}

interface Remembered {
  level: number;
  slotMs: number;
  at: number;
}

/** Per key (a stream, or a standard topic), how contended this container found it lately. */
export class Contention {
  private readonly keys = new Map<string, Remembered>();

  constructor(
    /** Also what a receive times its grant pauses by (receiver.ts `ShardGrants.pause`). */
    readonly stopwatch: Stopwatch = realStopwatch,
    private readonly fraction: () => number = Math.random,
    readonly budgetMs: number = APPEND_BUDGET_MS,
  ) {}

  /** Starts one append (its budget runs from now) on `keys`: it starts at their highest remembered level. */
  begin(keys: readonly string[]): ContendedAppend {
    const now = this.stopwatch.now();
    let level = 0;
    let slotMs = SLOT_DEFAULT_MS;
    for (const key of keys) {
      const seen = this.keys.get(key);
      if (!seen) continue;
      const faded = seen.level - Math.floor((now - seen.at) / LEVEL_FADE_MS);
      if (faded > level) {
        level = faded;
        slotMs = seen.slotMs;
      }
    }
    return new ContendedAppend(this.stopwatch, this.fraction, now + this.budgetMs, level, slotMs, (ended, slot) => this.remember(keys, ended, slot));
  }

  /** How many keys are remembered (never more than {@link KEYS_REMEMBERED}). */
  get remembered(): number {
    return this.keys.size;
  }

  /** The level an append ended at, for the next one on its keys. */
  private remember(keys: readonly string[], level: number, slotMs: number): void {
    const at = this.stopwatch.now();
    for (const key of keys) {
      this.keys.delete(key);
      if (level > 0) this.keys.set(key, { level: Math.min(LEVEL_MAX, level), slotMs, at });
    }
    // An append of several streams adds several keys: trim back to the bound, oldest first.
    while (this.keys.size > KEYS_REMEMBERED) this.keys.delete(this.keys.keys().next().value as string);
  }
}

/** One append's tries: when to wait, and whether its budget allows another try. */
export class ContendedAppend {
  private attemptStart: number;
  private losses = 0;
  /** Whether the level was handed back already (won, gave up, or ran out of budget). */
  private ended = false;

  constructor(
    private readonly stopwatch: Stopwatch,
    private readonly fraction: () => number,
    private readonly deadline: number,
    private level: number,
    private slotMs: number,
    private readonly remember: (level: number, slotMs: number) => void,
  ) {
    this.attemptStart = stopwatch.now();
  }

  /** Races lost so far. */
  get lost(): number {
    return this.losses;
  }

  /** Whether the keys are contended now: {@link turn} would wait. */
  get contended(): boolean {
    return this.level > 0;
  }

  /** Milliseconds left of the budget. */
  remainingMs(): number {
    return this.deadline - this.stopwatch.now();
  }

  /**
   * Waits before a try when the keys are contended (`contended` false: the caller has somewhere
   * else to go, e.g. another partition, and tries at once), never past the budget's end. Returns
   * whether the wait was at most one slot (the last try's own time): what that try learned of the
   * stream is then at most about one append old (stream-log.ts, "learned heads").
   */
  async turn(contended = true, maxWaitMs = Infinity): Promise<boolean> {
    const jitter = contended ? fullJitterMs(this.level, this.slotMs, this.fraction()) : 0;
    const remaining = this.remainingMs();
    // Cut to the budget's end, unless only APPEND_MIN_TRIES keeps the append going (then a full wait, not a spin),
    // and to what the caller allows (a receive's deadline).
    const wait = Math.max(0, Math.min(maxWaitMs, remaining > 0 ? Math.min(remaining, jitter) : jitter));
    if (wait > 0) await this.stopwatch.wait(wait);
    this.attemptStart = this.stopwatch.now();
    return wait <= Math.min(SLOT_MAX_MS, Math.max(SLOT_MIN_MS, this.slotMs));
  }

  /** The try lost its race: true when the budget allows another one (time left, or fewer than APPEND_MIN_TRIES made). */
  lostRace(): boolean {
    this.losses++;
    this.slotMs = this.stopwatch.now() - this.attemptStart;
    this.level++;
    if (this.remainingMs() > 0 || this.losses < APPEND_MIN_TRIES) return true;
    this.end(this.level);
    return false;
  }

  /**
   * The caller stops before a win or its budget's end (a claim's tries ran out, or it found nothing
   * left to write): when it lost races, the next one on these keys starts where this one ended.
   */
  settle(): void {
    if (this.losses > 0) this.end(this.level);
    this.ended = true;
  }

  /** The try won: the next append on these keys starts one level lower than this one ended. */
  won(): void {
    this.end(this.level - 1);
  }

  private end(level: number): void {
    if (this.ended) return;
    this.ended = true;
    this.remember(level, this.slotMs);
  }
}
