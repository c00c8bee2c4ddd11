/**
 * The local stand-in for an SQS queue and its Lambda event source mapping, shared by the local
 * delay queue (release wake-ups), check-back queue and push queue, so that all three behave as
 * their AWS queues do:
 *
 * - a message is delivered after its delay (SQS `DelaySeconds`), in an SQS event (`Records`, one
 *   per message, `attributes.ApproximateReceiveCount`) of at most `batchSize` records;
 * - with `ReportBatchItemFailures` semantics: the records the handler names in `batchItemFailures`,
 *   or every record when it throws, come back after the queue's visibility timeout; the others are
 *   deleted;
 * - after `maxReceiveCount` receives a message goes to the dead letters (the redrive policy of
 *   `cdk/background.ts`' `WorkQueue`), kept in `deadLetters` and logged;
 * - at most `maxConcurrency` handler runs at a time (the event source's `maxConcurrency`).
 *
 * What it cannot do: survive the process. Messages waiting in it are lost on stop or crash; the
 * local runtime re-arms timers, check-backs and push jobs from DynamoDB at start (local/runtime.ts).
 */
import { randomUUID } from 'node:crypto';
import { UnrefTimers } from './unref-timers.js';

export interface SqsLikeRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  eventSource: 'aws:sqs';
  attributes: Record<string, string>;
}

export interface SqsLikeEvent {
  Records: SqsLikeRecord[];
}

export type SqsLikeTarget = (event: SqsLikeEvent) => Promise<unknown>;

export interface LocalSqsQueueOptions {
  /** For logs: `delay`, `checks`, `push`. */
  name: string;
  /** When a failed record comes back (the queue's visibility timeout). */
  visibilityMs: number;
  /** Receives before a message is dead-lettered (the redrive policy's maxReceiveCount). */
  maxReceiveCount: number;
  /** Records per event: the messages of one `send` are split into events of at most this many. */
  batchSize: number;
  /** Handler runs at once, at most (default: no limit). */
  maxConcurrency?: number;
}

interface Message {
  messageId: string;
  body: string;
  receives: number;
}

export class LocalSqsQueue {
  private target: SqsLikeTarget | undefined;
  private readonly timers = new UnrefTimers();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Messages that reached `maxReceiveCount` (the dead-letter queue). */
  readonly deadLetters: Array<{ messageId: string; body: string; receives: number }> = [];

  constructor(private readonly options: LocalSqsQueueOptions) {}

  setTarget(target: SqsLikeTarget | undefined): void {
    this.target = target;
  }

  /**
   * Enqueues `bodies`, delivered after `delayMs`. With `delayMs` ≤ 0 and `awaitRun`, resolves once
   * their first run ended (what an in-process caller that waits for the work needs); otherwise at once.
   */
  async send(bodies: readonly string[], delayMs = 0, awaitRun = false): Promise<void> {
    if (bodies.length === 0) return;
    const messages = bodies.map((body) => ({ messageId: randomUUID(), body, receives: 0 }));
    const events: Message[][] = [];
    for (let i = 0; i < messages.length; i += this.options.batchSize) events.push(messages.slice(i, i + this.options.batchSize));
    if (delayMs <= 0 && awaitRun) {
      await Promise.all(events.map((event) => this.invoke(event)));
      return;
    }
    for (const event of events) this.after(delayMs, () => this.invoke(event));
  }

  /** Cancels every waiting message and redelivery (runtime stop). */
  clear(): void {
    this.timers.clear();
  }

  private after(ms: number, run: () => Promise<void>): void {
    this.timers.after(ms, () => void run());
  }

  private async invoke(messages: Message[]): Promise<void> {
    const target = this.target;
    if (!target) return;
    await this.slot();
    for (const m of messages) m.receives++;
    const records: SqsLikeRecord[] = messages.map((m) => ({
      messageId: m.messageId,
      receiptHandle: randomUUID(),
      body: m.body,
      eventSource: 'aws:sqs',
      attributes: { ApproximateReceiveCount: String(m.receives) },
    }));
    let failed: Message[];
    try {
      const response = (await target({ Records: records })) as { batchItemFailures?: Array<{ itemIdentifier?: string }> } | undefined;
      const ids = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      failed = messages.filter((m) => ids.has(m.messageId));
    } catch (error) {
      console.error(`local ${this.options.name} queue: the handler failed; its records come back after the visibility timeout`, error);
      failed = messages;
    } finally {
      this.release();
    }
    const again = failed.filter((m) => m.receives < this.options.maxReceiveCount);
    for (const m of failed.filter((f) => f.receives >= this.options.maxReceiveCount)) {
      this.deadLetters.push({ messageId: m.messageId, body: m.body, receives: m.receives });
      console.error(`local ${this.options.name} queue: message ${m.messageId} dead-lettered after ${m.receives} receives`);
    }
    if (again.length > 0) this.after(this.options.visibilityMs, () => this.invoke(again));
  }

  private async slot(): Promise<void> {
    const max = this.options.maxConcurrency ?? Number.POSITIVE_INFINITY;
    while (this.running >= max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}
