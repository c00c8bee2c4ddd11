/**
 * What the stream log reports of each append it makes (stream-log.ts), for the per-topic
 * contention metrics (services/append-meter.ts).
 */

/** One append's outcome on its streams (several for a multi-stream append). */
export interface AppendOutcome {
  /** The segment was written. */
  landed: boolean;
  /** Races it lost before it landed, was throttled, or gave up (a one-try append: 1). */
  lost: number;
  /** It answered 429 Throttled: its streams stayed contended for the whole budget. */
  throttled: boolean;
}

export type AppendObserver = (streams: readonly string[], outcome: AppendOutcome) => void;
