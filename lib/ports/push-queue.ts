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

/** The push worker's Lambda timeout: a job drains for at most 60 s (Pusher), plus a last round of 30 s requests and commits. */
export const PUSH_WORKER_TIMEOUT_MS = 120_000;

/**
 * The push queue's visibility timeout: a job whose run failed comes back after it
 * (AWS recommends six times the consumer's timeout, so retries cannot overlap).
 */
export const PUSH_JOB_VISIBILITY_MS = 6 * PUSH_WORKER_TIMEOUT_MS;

export interface PushQueue {
  /** Enqueues `jobs`, each delivered after `delayMs` (capped at {@link PUSH_QUEUE_MAX_DELAY_MS}; longer waits carry `notBefore`). */
  send(jobs: readonly PushJob[], delayMs?: number): Promise<void>;
}
