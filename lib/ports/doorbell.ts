/**
 * A pull group's doorbell (docs/design.md, "Waking SDK consumers"): the
 * dispatcher rings it when a topic the group's parked consumers wait on got
 * a flagged segment; a consumer parked on it wakes and receives. On AWS an
 * SQS queue per group (lib/adapters/aws/sqs-doorbell.ts), locally an
 * in-process stand-in (lib/adapters/local/in-process-doorbell.ts).
 */
export interface Doorbell {
  /**
   * Rings each group's doorbell once. Resolves to the groups it could not
   * ring (the caller retries their segments); a ring is idempotent for the
   * consumer: an extra one wakes it to a receive that finds nothing.
   */
  ring(groups: readonly string[]): Promise<readonly string[]>;
}

/** Which groups have consumers parked on a topic's doorbell right now. */
export interface ParkedGroups {
  parkedOn(topic: string, now: number): Promise<readonly string[]>;
}

/**
 * The doorbell queues themselves (AWS: one SQS queue per pull group, created
 * by the service when a group's first consumer parks; the local runtime has none).
 */
export interface DoorbellQueues {
  /** Creates the group's queue if it does not exist (idempotent) and answers its URL. */
  create(group: string, createdAt: number): Promise<string>;
  /** Deletes a queue; a queue that is already gone is not an error. */
  remove(queueUrl: string): Promise<void>;
}

/** The local runtime's doorbells seen from a long poll: it waits on its group's instead of its topics. */
export interface DoorbellWaiter {
  /** A point in the group's ring history, taken before a look for messages. */
  mark(group: string): number;
  /** Resolves true when the group was rung after `since` or rings within `ms`; false when the time is up. */
  wait(group: string, ms: number, since?: number): Promise<boolean>;
}
