/**
 * Timer ports (docs/design.md, Scheduled messages). On AWS the one-time
 * scheduler is EventBridge Scheduler (minute precision, far horizon) and the
 * delay queue is SQS (DelaySeconds ≤ 900, the last stretch); locally both are
 * in-process timers that invoke the same handlers with the same event shapes.
 */

/** Payload of a minute wake-up: arm second-level wake-ups for messages due in `minute`. */
export interface MinuteWake {
  kind: 'minute';
  minute: number;
}

/** Payload of a release wake-up: release what is due in `minute`, up to and including `second`. */
export interface ReleaseWake {
  kind: 'release';
  minute: number;
  second: number;
}

export interface OneTimeScheduler {
  /** Creates a one-time schedule `name` firing at `at` (ms) with `payload`; idempotent by name. */
  scheduleAt(name: string, at: number, payload: MinuteWake): Promise<void>;
}

export interface DelayQueue {
  /** Delivers `payload` to the release handler after `delayMs` (SQS rounds up to whole seconds, at most 900). */
  send(payload: ReleaseWake, delayMs: number): Promise<void>;
}

/** What the send path needs: make sure something wakes up at (or just after) `dueAt`. */
export interface Timers {
  arm(dueAt: number): Promise<void>;
}
