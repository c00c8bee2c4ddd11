/**
 * Timer ports (docs/design.md, Scheduled messages). On AWS the one-time
 * scheduler is EventBridge Scheduler (minute precision, far horizon) and the
 * delay queue is SQS (DelaySeconds ≤ 900, the last stretch); locally both are
 * in-process timers that invoke the same handlers with the same event shapes.
 */

/** Payload of a minute wake-up: arm second-level wake-ups for messages and check-backs due in `minute`. */
export interface MinuteWake {
  kind: 'minute';
  minute: number;
}

/**
 * Deferred ids one release wake-up carries at most. A deferred id is a ULID
 * (26 characters, 29 bytes as a JSON array element), so a full wake-up's body
 * is at most 1,000 × 29 + 80 bytes ≈ 29 KB: one 64 KiB SQS billing chunk, far
 * under SQS's 256 KiB message limit. More ids due in one second go in more
 * wake-ups of at most this many each.
 */
export const MAX_IDS_PER_WAKE = 1000;

/**
 * Payload of a release wake-up: release the deferred messages `ids`, due in
 * `second` (of `minute`). Release reads them by key (strongly consistent), never
 * through the due index. A wake-up without `ids` (queued by a version before
 * ids were carried) releases what the due index shows due in `minute`.
 */
export interface ReleaseWake {
  kind: 'release';
  minute: number;
  second: number;
  ids?: string[];
}

/** A deferred message (scheduled) and when it is due (ms). */
export interface DueWake {
  id: string;
  dueAt: number;
}

/** A half message's transaction id and when its next check-back is due (ms). */
export interface CheckWake {
  transactionId: string;
  at: number;
}

export interface OneTimeScheduler {
  /** Creates a one-time schedule `name` firing at `at` (ms) with `payload`; idempotent by name. */
  scheduleAt(name: string, at: number, payload: MinuteWake): Promise<void>;
}

export interface DelayQueue {
  /** Delivers `payload` to the release handler after `delayMs` (SQS rounds up to whole seconds, at most 900). */
  send(payload: ReleaseWake, delayMs: number): Promise<void>;
}

/** What the send and commit paths need: make sure something wakes up at (or just after) each due time. */
export interface Timers {
  /** Arms the release of scheduled messages (each wake-up carries the ids due in its second). */
  arm(wakes: DueWake[]): Promise<void>;
  /** Arms check-backs of half messages with second precision (the minute check sweep is the safety net). */
  armChecks(wakes: CheckWake[]): Promise<void>;
}
