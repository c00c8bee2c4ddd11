/**
 * The push queue (SQS on AWS; in-process locally with the same SQS event
 * shape): jobs that tell a push worker "group G may have messages to push".
 */

/** One push job. `stream` is what the dispatcher saw news on (for logs); the worker claims for the whole group. */
export interface PushJob {
  group: string;
  stream?: string | undefined;
  /**
   * Epoch ms before which the job must not run (a retry back-off longer than
   * the queue's longest delay hops: the worker sends it on again).
   */
  notBefore?: number | undefined;
}

/** The longest delay of one SQS message (DelaySeconds ≤ 900). */
export const PUSH_QUEUE_MAX_DELAY_MS = 900_000;

export interface PushQueue {
  /** Enqueues `jobs`, each delivered after `delayMs` (capped at {@link PUSH_QUEUE_MAX_DELAY_MS}; longer waits carry `notBefore`). */
  send(jobs: readonly PushJob[], delayMs?: number): Promise<void>;
}
