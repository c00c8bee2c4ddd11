/**
 * The local stand-in for EventBridge Scheduler and SQS delays: in-process
 * timers that invoke the same handlers with the same event shapes (a
 * scheduler's JSON input; an SQS event with one record). Targets are set by
 * the local runtime once the handler modules are loaded.
 */
import { randomUUID } from 'node:crypto';
import type { DelayQueue, MinuteWake, OneTimeScheduler, ReleaseWake } from '../../ports/timers.js';

export interface SqsLikeEvent {
  Records: Array<{ messageId: string; receiptHandle: string; body: string; eventSource: 'aws:sqs'; attributes: Record<string, string> }>;
}

export interface TimerTargets {
  minute: (event: MinuteWake) => Promise<unknown>;
  release: (event: SqsLikeEvent) => Promise<unknown>;
}

export class LocalTimerBus implements OneTimeScheduler, DelayQueue {
  private targets: TimerTargets | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly schedules = new Set<string>();

  setTargets(targets: TimerTargets | undefined): void {
    this.targets = targets;
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
    const body = JSON.stringify(payload);
    this.after(delayMs, async () => {
      await this.targets?.release({
        Records: [{ messageId: randomUUID(), receiptHandle: randomUUID(), body, eventSource: 'aws:sqs', attributes: {} }],
      });
    });
  }

  /** Cancels every pending timer (runtime stop). What was armed is re-armed from DynamoDB at the next start. */
  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.schedules.clear();
  }

  private after(ms: number, run: () => Promise<void>) {
    // setTimeout holds at most ~24.8 days; longer waits hop.
    const wait = Math.min(Math.max(0, ms), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (wait < ms) return this.after(ms - wait, run);
      run().catch((error: unknown) => console.error('local timer failed', error));
    }, wait);
    timer.unref();
    this.timers.add(timer);
  }
}
