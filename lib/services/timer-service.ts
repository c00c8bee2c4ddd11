/**
 * Scheduled delivery and check-back timers (docs/design.md, Scheduled messages; Transactional messages).
 *
 *   send (due in > 10 min)  → one EventBridge schedule per due minute, fired 2 min early
 *   minute handler          → one SQS delay message per second that has messages due, carrying
 *                             their ids; check-backs due in that minute go to the check queue delayed
 *   send (due in ≤ 10 min)  → that SQS delay message directly, carrying the ids of the send
 *   release handler         → reads the ids it carries (strongly consistent BatchGet, never the
 *                             due index), releases what is due (idempotent), sleeps out the last
 *                             fraction of a second, re-queues what is not due yet; wake-ups of one
 *                             second in a container join one flight, and release rounds of the
 *                             container run one at a time (no appends racing each other)
 *   check-back due ≤ 10 min → the check queue with DelaySeconds (second precision)
 *
 * Minute wake markers (`WAKE`/`m…` items) make each minute's schedule armed once,
 * however many messages share it, and let the local runtime re-arm after a
 * restart. A periodic sweep releases anything overdue that a lost timer left
 * behind, from a stored low-water mark (`TIMER`/`low`), however long ago it was
 * due; the once-a-minute check sweep does the same for check-backs.
 */
import type { DeferredStore } from '../adapters/dynamodb/deferred.js';
import { minuteOf, wakeBucket } from '../adapters/dynamodb/keys.js';
import { minuteScheduleName } from '../adapters/aws/names.js';
import type { Clock } from '../ports/clock.js';
import { MAX_IDS_PER_WAKE, type CheckWake, type DelayQueue, type DueWake, type OneTimeScheduler, type ReleaseWake, type Timers } from '../ports/timers.js';
import type { CheckDispatcher } from '../ports/webhooks.js';

/** Messages due within this horizon are armed on the delay queue directly (SQS allows 900 s). */
const NEAR_MS = 10 * 60_000;
/** A minute's schedule fires this early, so its second-level wake-ups are all in place in time. */
const MINUTE_LEAD_MS = 2 * 60_000;
/** The release handler waits in-process for items due this soon instead of re-queueing them. */
const SLEEP_MAX_MS = 1500;
/** Rounds of one release flight before what is still waiting is armed again instead (a bound, not a tuning). */
const MAX_FLIGHT_ROUNDS = 100;
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

/** Releases what of `ids` is due; answers how many it released and which are still scheduled for later. */
export type Releaser = (ids: string[]) => Promise<{ released: number; pending: DueWake[] }>;
/** Logs what went wrong (the default says nothing). */
export type TimerLog = (message: string, details: Record<string, unknown>) => void;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The release of one due second running in this container, and the ids waiting for its next round. */
interface Flight {
  waiting: Set<string>;
  done: Promise<number>;
}

export class TimerService implements Timers {
  /** Buckets this container already armed (saves the marker write for every message of a busy second). */
  private readonly armed = new Set<string>();
  /** Release flights running in this container, by due second (one release path per second). */
  private readonly flights = new Map<number, Flight>();
  /** The last release round of this container (rounds run one at a time). */
  private appending: Promise<void> = Promise.resolve();

  constructor(
    private readonly deferred: DeferredStore,
    private readonly scheduler: OneTimeScheduler,
    private readonly queue: DelayQueue,
    private readonly clock: Clock,
    private readonly release: Releaser,
    private readonly wait: (ms: number) => Promise<void> = sleep,
    private readonly log: TimerLog = () => {},
    private readonly bounds: SweepBounds = SWEEP_BOUNDS,
    /** Where check-backs go (the check queue); without it, check-backs wait for the check sweep. */
    private readonly checks?: CheckDispatcher,
  ) {}

  async arm(wakes: DueWake[]): Promise<void> {
    const now = this.clock.now();
    await this.sendReleases(wakes.filter((w) => w.dueAt - now <= NEAR_MS), now);
    for (const minute of new Set(wakes.filter((w) => w.dueAt - now > NEAR_MS).map((w) => minuteOf(w.dueAt)))) await this.wakeMinute(minute, now);
  }

  /**
   * Check-backs due within the delay queue's reach go to the check queue
   * delayed to their second; later ones are armed by their minute's schedule.
   * A failure is logged, not thrown: the check sweep (every minute) still
   * finds the check due, only later than to the second.
   */
  async armChecks(wakes: CheckWake[]): Promise<void> {
    if (!this.checks || wakes.length === 0) return;
    const now = this.clock.now();
    try {
      await this.sendChecks(wakes.filter((w) => w.at - now <= NEAR_MS), now);
      for (const minute of new Set(wakes.filter((w) => w.at - now > NEAR_MS).map((w) => minuteOf(w.at)))) await this.wakeMinute(minute, now);
    } catch (error) {
      this.log('check-back not armed; the check sweep dispatches it when due', {
        transactionIds: wakes.map((w) => w.transactionId),
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  }

  /**
   * One delay-queue message per second with messages due, carrying their ids
   * ({@link MAX_IDS_PER_WAKE} at most each), delayed to the earliest of them.
   * Every send sends its own: a second shared by several sends gets several
   * wake-ups, each releasing its own ids (a release is idempotent).
   */
  private async sendReleases(wakes: DueWake[], now: number): Promise<void> {
    for (const [second, entries] of bySecond(wakes, (w) => w.dueAt)) {
      const ids = [...new Set(entries.map((w) => w.id))];
      const earliest = Math.min(...entries.map((w) => w.dueAt));
      for (let i = 0; i < ids.length; i += MAX_IDS_PER_WAKE) {
        await this.queue.send({ kind: 'release', minute: minuteOf(second * 1000), second, ids: ids.slice(i, i + MAX_IDS_PER_WAKE) }, earliest - now);
      }
    }
  }

  private async sendChecks(wakes: CheckWake[], now: number): Promise<void> {
    for (const entries of bySecond(wakes, (w) => w.at).values()) {
      await this.checks!.dispatch([...new Set(entries.map((w) => w.transactionId))], Math.min(...entries.map((w) => w.at)) - now);
    }
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

  /**
   * Minute handler: arm a delay-queue wake-up (with its ids) for every second
   * of `minute` with messages due, and send the check-backs due in `minute`
   * to the check queue delayed to their second.
   */
  async onMinute(minute: number): Promise<void> {
    const now = this.clock.now();
    await this.sendReleases(await this.deferred.dueEntries(minute), now);
    if (this.checks) {
      const due = await this.deferred.checksDueBetween(minute * 60_000, (minute + 1) * 60_000 - 1);
      await this.sendChecks(due.map((c) => ({ transactionId: `t${c.id}`, at: c.at })), now);
    }
  }

  /**
   * Release handler: releases the ids the wake-up carries (read by key,
   * strongly consistent); those not due yet are waited for when they are due
   * within {@link SLEEP_MAX_MS}, else armed again.
   *
   * One release path per due second in a container: a wake-up whose second
   * is being released here hands its ids to that release (the flight) and
   * waits for it, instead of appending alongside it. Concurrent appends to
   * the same partition lose races (a failed transaction billed on AWS per
   * lost race); one flight appends the ids of its second together, one
   * transaction per round, in as few segments as their partitions allow.
   * Returns how many this call's flight released (0 for a wake-up that
   * joined a flight: the flight counts them).
   */
  async onRelease(wake: ReleaseWake): Promise<number> {
    if (wake.ids === undefined) return this.onReleaseWithoutIds(wake);
    const running = this.flights.get(wake.second);
    if (running) {
      for (const id of wake.ids) running.waiting.add(id);
      await running.done;
      return 0;
    }
    const flight: Flight = { waiting: new Set(wake.ids), done: Promise.resolve(0) };
    this.flights.set(wake.second, flight);
    flight.done = this.fly(wake.second, flight);
    return flight.done;
  }

  /**
   * Releases a flight's waiting ids in rounds until none are left. Ids that
   * join while a round runs go in the next round. The flight leaves the map
   * in the same synchronous step that finds nothing waiting, so no id can
   * join a flight that has ended. An error rejects every wake-up that joined
   * (SQS retries their records; the sweep is the safety net).
   */
  private async fly(second: number, flight: Flight): Promise<number> {
    let released = 0;
    try {
      // Wake-ups delivered together (one SQS batch, timers of one tick) join before the first round.
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (let round = 0; flight.waiting.size > 0; round++) {
        if (round >= MAX_FLIGHT_ROUNDS) {
          // Not due after this many rounds (a clock far behind the wake-up): armed again, not dropped.
          const ids = [...flight.waiting];
          flight.waiting.clear();
          await this.sendReleases(ids.map((id) => ({ id, dueAt: this.clock.now() + 1000 })), this.clock.now());
          continue;
        }
        // The ids are taken when the round may append: what joined while it waited goes with it.
        const outcome = await this.oneAtATime(() => {
          const ids = [...flight.waiting];
          flight.waiting.clear();
          return this.release(ids);
        });
        released += outcome.released;
        if (outcome.pending.length === 0) continue;
        const now = this.clock.now();
        const next = Math.min(...outcome.pending.map((p) => p.dueAt));
        if (next - now > SLEEP_MAX_MS) {
          await this.sendReleases(outcome.pending, now);
          continue;
        }
        await this.wait(next - now);
        for (const p of outcome.pending) flight.waiting.add(p.id);
      }
      return released;
    } finally {
      this.flights.delete(second);
    }
  }

  /**
   * Runs `append` after every release round of this container started before
   * it has ended: flights of neighbouring seconds (a round of second s still
   * running when s + 1 fires), the sweep's pages and id-less wake-ups do not
   * append side by side and lose races to each other.
   */
  private async oneAtATime<T>(append: () => Promise<T>): Promise<T> {
    const before = this.appending;
    let done!: () => void;
    this.appending = new Promise<void>((resolve) => (done = resolve));
    try {
      await before;
      return await append();
    } finally {
      done();
    }
  }

  /** A wake-up queued before wake-ups carried ids: what the due index shows due in its minute, up to its second. */
  private async onReleaseWithoutIds(wake: ReleaseWake): Promise<number> {
    let released = 0;
    for (let round = 0; round < 100; round++) {
      const now = this.clock.now();
      released += await this.releaseDue(wake.minute, now);
      const pending = (await this.deferred.dueEntries(wake.minute)).filter((e) => Math.floor(e.dueAt / 1000) <= wake.second && e.dueAt > now);
      if (pending.length === 0) return released;
      const next = Math.min(...pending.map((e) => e.dueAt));
      if (next - now > SLEEP_MAX_MS) {
        await this.sendReleases(pending, now);
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
            released += (await this.oneAtATime(() => this.release(page.ids))).released;
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

  /**
   * After a restart (local runtime): arm again what the lost in-process timers
   * held — the seconds of the next minutes from the due and check-back
   * indexes (as the minute handler does), the minute schedules from their
   * markers — and sweep what fell due meanwhile.
   */
  async rearm(): Promise<void> {
    const now = this.clock.now();
    this.armed.clear();
    for (let minute = minuteOf(now); minute <= minuteOf(now + NEAR_MS + MINUTE_LEAD_MS); minute++) await this.onMinute(minute);
    for (const minute of await this.deferred.wakes('m', minuteOf(now + NEAR_MS + MINUTE_LEAD_MS) + 1)) {
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
      const count = (await this.oneAtATime(() => this.release(ids))).released;
      released += count;
      if (ids.length < RELEASE_PAGE || count === 0) break;
    }
    return released;
  }
}

/** Entries grouped by the second of their time (in time order). */
function bySecond<T>(entries: T[], at: (entry: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const entry of [...entries].sort((a, b) => at(a) - at(b))) {
    const second = Math.floor(at(entry) / 1000);
    const list = out.get(second);
    if (list) list.push(entry);
    else out.set(second, [entry]);
  }
  return out;
}
