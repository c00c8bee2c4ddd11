/**
 * The local stand-in for EventBridge Scheduler and the delay queue: in-process timers that invoke
 * the same handlers with the same event shapes (a scheduler's JSON input; an SQS event). Release
 * wake-ups go through a `LocalSqsQueue` with the delay queue's settings: a record the release
 * handler reports as failed (or every record, when it throws) comes back after the queue's
 * visibility timeout, and goes to the dead letters after 5 receives, as on AWS. A minute schedule
 * runs once; a failure is logged (EventBridge Scheduler would retry the invocation for up to 24 h;
 * the sweep releases what it missed). Targets are set by the local runtime once the handler
 * modules are loaded.
 */
import type { DelayQueue, MinuteWake, OneTimeScheduler, ReleaseWake } from '../../ports/timers.js';
import { DELAY_QUEUE_VISIBILITY_MS, WORK_QUEUE_BATCH_SIZE, WORK_QUEUE_MAX_RECEIVES } from '../../ports/work-queues.js';
import { LocalSqsQueue, type SqsLikeEvent } from './sqs-like-queue.js';
import { UnrefTimers } from './unref-timers.js';

export type { SqsLikeEvent } from './sqs-like-queue.js';

export interface TimerTargets {
  minute: (event: MinuteWake) => Promise<unknown>;
  release: (event: SqsLikeEvent) => Promise<unknown>;
}

export class LocalTimerBus implements OneTimeScheduler, DelayQueue {
  private targets: TimerTargets | undefined;
  private readonly timers = new UnrefTimers();
  private readonly schedules = new Set<string>();
  /** The delay queue (release wake-ups). */
  readonly delayQueue: LocalSqsQueue;

  constructor(delayVisibilityMs = DELAY_QUEUE_VISIBILITY_MS) {
    this.delayQueue = new LocalSqsQueue({ name: 'delay', visibilityMs: delayVisibilityMs, maxReceiveCount: WORK_QUEUE_MAX_RECEIVES, batchSize: WORK_QUEUE_BATCH_SIZE });
  }

  setTargets(targets: TimerTargets | undefined): void {
    this.targets = targets;
    this.delayQueue.setTarget(targets ? (event) => targets.release(event) : undefined);
  }

  async scheduleAt(name: string, at: number, payload: MinuteWake): Promise<void> {
    if (this.schedules.has(name)) return;
    this.schedules.add(name);
    this.after(at - Date.now(), async () => {
      this.schedules.delete(name);
      await this.targets?.minute(payload);
    });
  }

  async send(payload: ReleaseWake, delayMs: number): Promise<void> {
    await this.delayQueue.send([JSON.stringify(payload)], delayMs);
  }

  /** Cancels every pending timer and wake-up (runtime stop). What was armed is re-armed from DynamoDB at the next start. */
  clear(): void {
    this.timers.clear();
    this.schedules.clear();
    this.delayQueue.clear();
  }

  private after(ms: number, run: () => Promise<void>) {
    this.timers.after(ms, () => void run().catch((error: unknown) => console.error('local timer failed', error)));
  }
}
