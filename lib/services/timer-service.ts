/**
 * Scheduled delivery timers (docs/design.md, Scheduled messages).
 *
 *   send (due in > 10 min)  → one EventBridge schedule per due minute, fired 2 min early
 *   minute handler          → one SQS delay message per second that has messages due
 *   send (due in ≤ 10 min)  → that SQS delay message directly
 *   release handler         → releases everything due (idempotent), sleeps out the
 *                             last fraction of a second, re-queues what is not due yet
 *
 * Wake markers (`WAKE` items) make each bucket's timer armed once, however many
 * messages share it, and let the local runtime re-arm after a restart. A
 * periodic sweep releases anything overdue that a lost timer left behind,
 * from a stored low-water mark (`TIMER`/`low`), however long ago it was due.
 */
import type { DeferredStore } from '../adapters/dynamodb/deferred.js';
import { minuteOf, wakeBucket } from '../adapters/dynamodb/keys.js';
import { minuteScheduleName } from '../adapters/aws/names.js';
import type { Clock } from '../ports/clock.js';
import type { DelayQueue, OneTimeScheduler, ReleaseWake, Timers } from '../ports/timers.js';

/** Messages due within this horizon are armed on the delay queue directly (SQS allows 900 s). */
const NEAR_MS = 10 * 60_000;
/** A minute's schedule fires this early, so its second-level wake-ups are all in place in time. */
const MINUTE_LEAD_MS = 2 * 60_000;
/** The release handler waits in-process for items due this soon instead of re-queueing them. */
const SLEEP_MAX_MS = 1500;
/** Due messages released per page of the due index. */
const RELEASE_PAGE = 100;
/** A wake marker outlives its bucket by a day (then TTL removes it). */
const WAKE_MARKER_KEEP_MS = 86_400_000;
/**
 * The sweep handles what is due up to this long ago, not up to now: a message
 * due then was written at least this long ago, so the eventually consistent
 * due index shows it (its lag is well below a second) before the mark passes it.
 */
export const SWEEP_SETTLE_MS = 5_000;
/** A deployment's first sweep (no mark yet) looks back at least this far (as far as the sweep before the mark did). */
const FIRST_SWEEP_LOOKBACK_MS = 10 * 60_000;

/** Bounds of one sweep run (the rest waits for the next run, the mark where this one stopped). */
export interface SweepBounds {
  /** Due-index entries read per page. @default 100 */
  pageSize: number;
  /** Pages with entries read and released per run (empty buckets count in `minutes`). @default 20 */
  pages: number;
  /** Minute buckets walked per run (an empty one costs one Query of 0.5 RCU). @default 1440 */
  minutes: number;
  /** Wall time per run (ms; the sweep function has 60 s). @default 40000 */
  budgetMs: number;
}
const SWEEP_BOUNDS: SweepBounds = { pageSize: RELEASE_PAGE, pages: 20, minutes: 1440, budgetMs: 40_000 };

export type Releaser = (ids: string[]) => Promise<number>;
/** Logs what went wrong (the default says nothing). */
export type TimerLog = (message: string, details: Record<string, unknown>) => void;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export class TimerService implements Timers {
  /** Buckets this container already armed (saves the marker write for every message of a busy second). */
  private readonly armed = new Set<string>();

  constructor(
    private readonly deferred: DeferredStore,
    private readonly scheduler: OneTimeScheduler,
    private readonly queue: DelayQueue,
    private readonly clock: Clock,
    private readonly release: Releaser,
    private readonly wait: (ms: number) => Promise<void> = sleep,
    private readonly log: TimerLog = () => {},
    private readonly bounds: SweepBounds = SWEEP_BOUNDS,
  ) {}

  async arm(dueAt: number): Promise<void> {
    const now = this.clock.now();
    if (dueAt - now <= NEAR_MS) await this.wakeSecond(dueAt, now);
    else await this.wakeMinute(minuteOf(dueAt), now);
  }

  private async wakeSecond(dueAt: number, now: number) {
    const second = Math.floor(dueAt / 1000);
    const bucket = wakeBucket('s', second);
    if (this.armed.has(bucket)) return;
    // Send first, mark second: a crash in between leaves a duplicate wake-up (harmless), never none.
    if (!(await this.deferred.hasWake(bucket))) {
      await this.queue.send({ kind: 'release', minute: minuteOf(dueAt), second }, dueAt - now);
      await this.deferred.markWake(bucket, dueAt + WAKE_MARKER_KEEP_MS);
    }
    this.armed.add(bucket);
  }

  private async wakeMinute(minute: number, now: number) {
    const bucket = wakeBucket('m', minute);
    if (this.armed.has(bucket)) return;
    if (!(await this.deferred.hasWake(bucket))) {
      await this.scheduler.scheduleAt(minuteScheduleName(minute), Math.max(now, minute * 60_000 - MINUTE_LEAD_MS), { kind: 'minute', minute });
      await this.deferred.markWake(bucket, minute * 60_000 + WAKE_MARKER_KEEP_MS);
    }
    this.armed.add(bucket);
  }

  /** Minute handler: arm a delay-queue wake-up for every second of `minute` with messages due. */
  async onMinute(minute: number): Promise<void> {
    const now = this.clock.now();
    const earliest = new Map<number, number>();
    for (const dueAt of await this.deferred.dueTimes(minute)) {
      const second = Math.floor(dueAt / 1000);
      earliest.set(second, Math.min(earliest.get(second) ?? Infinity, dueAt));
    }
    for (const dueAt of earliest.values()) await this.wakeSecond(dueAt, now);
  }

  /** Release handler: everything due in the wake's minute; the rest of its second is waited for or re-queued. */
  async onRelease(wake: ReleaseWake): Promise<number> {
    let released = 0;
    for (let round = 0; round < 100; round++) {
      const now = this.clock.now();
      released += await this.releaseDue(wake.minute, now);
      const pending = (await this.deferred.dueTimes(wake.minute)).filter((t) => Math.floor(t / 1000) <= wake.second && t > now);
      if (pending.length === 0) return released;
      const next = Math.min(...pending);
      if (next - now > SLEEP_MAX_MS) {
        await this.queue.send(wake, next - now);
        return released;
      }
      await this.wait(next - this.clock.now());
    }
    return released;
  }

  /**
   * The safety net (every minute): releases every scheduled message due from
   * the low-water mark up to now − {@link SWEEP_SETTLE_MS}, minute bucket by
   * minute bucket, in bounded pages. The mark then moves past the buckets it
   * read to the end — not past a bucket that failed or that the bounds cut
   * short, so the next run starts there. A failing bucket is logged and does
   * not stop the walk. Returns how many it released.
   */
  async sweep(): Promise<number> {
    const started = this.clock.now();
    const until = started - SWEEP_SETTLE_MS;
    const stored = await this.deferred.sweepMark();
    const from = stored ?? (await this.firstMark(until));
    let mark = from;
    let holding = false; // a bucket before this one is not finished: the mark stays
    let released = 0;
    let pages = 0;
    for (let minute = minuteOf(from), walked = 0; minute <= minuteOf(until) && walked < this.bounds.minutes; minute++, walked++) {
      if (pages >= this.bounds.pages || this.clock.now() - started > this.bounds.budgetMs) break;
      let start: Record<string, unknown> | undefined;
      try {
        do {
          const page = await this.deferred.duePage(minute, until, this.bounds.pageSize, start);
          if (page.ids.length > 0) {
            pages++;
            released += await this.release(page.ids);
          }
          start = page.next;
        } while (start && pages < this.bounds.pages);
      } catch (error) {
        holding = true;
        this.log('timer sweep: a minute bucket failed; the next sweep reads it again', {
          minute: new Date(minute * 60_000).toISOString(),
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
        continue; // the later buckets are released all the same
      }
      if (start !== undefined) break; // the page bound cut this bucket short: the next run goes on from here
      if (!holding) mark = Math.min(until, (minute + 1) * 60_000 - 1);
    }
    if (mark > from || stored === undefined) await this.deferred.advanceSweepMark(mark);
    return released;
  }

  /**
   * Where a deployment's first sweep starts: at its earliest wake marker (markers
   * live a day past their bucket, so a deployment that swept without a mark
   * keeps what it armed), and at least {@link FIRST_SWEEP_LOOKBACK_MS} back.
   */
  private async firstMark(until: number): Promise<number> {
    const [second, minute] = await Promise.all([this.deferred.earliestWake('s'), this.deferred.earliestWake('m')]);
    return Math.min(until - FIRST_SWEEP_LOOKBACK_MS, second === undefined ? Infinity : second * 1000, minute === undefined ? Infinity : minute * 60_000);
  }

  /** After a restart (local runtime): arm again every bucket armed before and not yet past. */
  async rearm(): Promise<void> {
    const now = this.clock.now();
    this.armed.clear();
    for (const second of await this.deferred.wakes('s', Math.floor(now / 1000) - 3600)) {
      await this.queue.send({ kind: 'release', minute: minuteOf(second * 1000), second }, second * 1000 - now);
      this.armed.add(wakeBucket('s', second));
    }
    for (const minute of await this.deferred.wakes('m', minuteOf(now) - 60)) {
      await this.scheduler.scheduleAt(minuteScheduleName(minute), Math.max(now, minute * 60_000 - MINUTE_LEAD_MS), { kind: 'minute', minute });
      this.armed.add(wakeBucket('m', minute));
    }
    await this.sweep();
  }

  private async releaseDue(minute: number, now: number): Promise<number> {
    let released = 0;
    for (let page = 0; page < 1000; page++) {
      const ids = await this.deferred.due(minute, now, RELEASE_PAGE);
      if (ids.length === 0) break;
      const count = await this.release(ids);
      released += count;
      if (ids.length < RELEASE_PAGE || count === 0) break;
    }
    return released;
  }
}
