/**
 * Producer batching for `SluiceClient.send` (issue 16: per-request fees are most of an unbatched
 * message's price). Sends to one topic made within `lingerMs` of each other go out as one
 * `POST /v1/topics/{topic}/messages/batch` — Kafka's `linger.ms`, the SQS buffered client's
 * `maxBatchOpenMs` — and each caller gets its own entry's result.
 *
 * - A batch closes when its linger ends, at 100 entries, or when the next entry would take its JSON
 *   body past the API's request limit (1 MiB); an entry too large to share a request goes alone.
 * - One batch request per topic at a time, in the order the sends were made: a topic's sends are
 *   stored in call order, as if each had waited for the one before (FIFO shard order holds).
 * - Entries the server answers with 429/503 are sent again, together and in order, after the
 *   client's back-off (at most `retry.maxAttempts` attempts in all), before anything later of the
 *   topic. Each keeps its `dedupId`, so a repeat is stored once.
 * - A whole batch refused as invalid (400) or too large (413) is sent again entry by entry, so a
 *   caller's bad message fails that caller only, with its own precise problem; any other failure of
 *   the request (404 topic, lost connection after the transport's retries) fails every entry of it.
 */
import { SluiceApiError, SluiceClientError } from './errors.js';
import { RETRYABLE_STATUS, retryDelay, type ResolvedRetryOptions } from './retry.js';
import type { SendBatchResult, SendBody, SendResult } from './types.js';

/** The API's request limit (`Limits.requestMaxBytes` on the server; this package imports nothing of it). */
export const BATCH_REQUEST_MAX_BYTES = 1024 * 1024;
/** The API's entries per batch (`Limits.batchMaxEntries`). */
export const BATCH_MAX_ENTRIES = 100;
/** `{"entries":[` … `]}` and the commas: what a batch body holds besides its entries. */
const ENVELOPE_BYTES = 16;

export interface SendBatcherDeps {
  /** One batch request (the transport retries it as a whole on 429/503 and lost connections). */
  sendBatch: (topic: string, entries: SendBody[]) => Promise<SendBatchResult>;
  /** One single send, for entries that go alone. */
  sendOne: (topic: string, entry: SendBody) => Promise<SendResult>;
  lingerMs: number;
  retry: ResolvedRetryOptions;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** The URL a batch goes to, for the errors built from its entries' problems. */
  urlOf: (topic: string) => string;
}

interface Pending {
  entry: SendBody;
  bytes: number;
  resolve: (result: SendResult) => void;
  reject: (error: unknown) => void;
}

interface TopicQueue {
  /** Batches closed or open, oldest first; only the last may still take entries. */
  batches: Pending[][];
  open: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  bytes: number;
  /** The batch request in flight (one per topic at a time). */
  running: Promise<void> | undefined;
}

const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

export class SendBatcher {
  private readonly topics = new Map<string, TopicQueue>();

  constructor(private readonly deps: SendBatcherDeps) {}

  /** Queues one send; resolves with its own result once its batch was answered. */
  add(topic: string, entry: SendBody): Promise<SendResult> {
    return new Promise<SendResult>((resolve, reject) => {
      const bytes = jsonBytes(entry) + 1;
      const q = this.queue(topic);
      if (!q.open || this.last(q).length >= BATCH_MAX_ENTRIES || q.bytes + bytes + ENVELOPE_BYTES > BATCH_REQUEST_MAX_BYTES) {
        this.close(topic, q);
        q.batches.push([]);
        q.open = true;
        q.bytes = 0;
        q.timer = setTimeout(() => this.close(topic, q), this.deps.lingerMs);
      }
      this.last(q).push({ entry, bytes, resolve, reject });
      q.bytes += bytes;
      if (this.last(q).length >= BATCH_MAX_ENTRIES) this.close(topic, q);
    });
  }

  /** Sends every batch still lingering now; resolves when every queued send was answered. */
  async flush(): Promise<void> {
    for (const [topic, q] of this.topics) this.close(topic, q);
    while ([...this.topics.values()].some((q) => q.running || q.batches.length > 0)) {
      await Promise.all([...this.topics.values()].map((q) => q.running));
    }
  }

  private queue(topic: string): TopicQueue {
    let q = this.topics.get(topic);
    if (!q) this.topics.set(topic, (q = { batches: [], open: false, timer: undefined, bytes: 0, running: undefined }));
    return q;
  }

  private last(q: TopicQueue): Pending[] {
    return q.batches[q.batches.length - 1] ?? [];
  }

  /** Ends the open batch's linger and starts the topic's next request if none runs. */
  private close(topic: string, q: TopicQueue): void {
    if (q.timer !== undefined) clearTimeout(q.timer);
    q.timer = undefined;
    q.open = false;
    this.pump(topic, q);
  }

  private pump(topic: string, q: TopicQueue): void {
    if (q.running) return;
    const ready = q.batches.length > 1 || (q.batches.length === 1 && !q.open) ? q.batches.shift() : undefined;
    if (!ready) return;
    q.running = this.deliver(topic, ready).finally(() => {
      q.running = undefined;
      this.pump(topic, q);
      if (!q.running && q.batches.length === 0 && this.topics.get(topic) === q) this.topics.delete(topic);
    });
  }

  /** Sends one batch to the end: retried entries included; settles every caller of it. */
  private async deliver(topic: string, batch: Pending[]): Promise<void> {
    if (batch.length === 1 || batch.some((p) => p.bytes + ENVELOPE_BYTES > BATCH_REQUEST_MAX_BYTES)) {
      for (const p of batch) await this.alone(topic, p);
      return;
    }
    let left = batch;
    for (let attempt = 1; left.length > 0; attempt++) {
      let answer: SendBatchResult;
      try {
        answer = await this.deps.sendBatch(topic, left.map((p) => p.entry));
      } catch (error) {
        if (error instanceof SluiceApiError && (error.status === 400 || error.status === 413)) {
          for (const p of left) await this.alone(topic, p);
        } else for (const p of left) p.reject(error);
        return;
      }
      const again: Pending[] = [];
      const retry = attempt < this.deps.retry.maxAttempts;
      for (const r of answer.results) {
        const p = left[r.index];
        if (!p) continue;
        if (!('error' in r)) {
          const { index: _index, ...result } = r;
          p.resolve(result);
        } else if (RETRYABLE_STATUS.has(r.error.status) && retry) {
          again.push(p);
        } else {
          p.reject(new SluiceApiError(r.error, { method: 'POST', url: this.deps.urlOf(topic) }));
        }
      }
      // An entry the answer does not name has no result: it goes again with the throttled ones.
      const named = new Set(answer.results.map((r) => r.index));
      left.forEach((p, i) => {
        if (named.has(i)) return;
        if (retry) again.push(p);
        else p.reject(new SluiceClientError(`the batch answer of ${this.deps.urlOf(topic)} named no result for entry ${i}`));
      });
      again.sort((a, b) => left.indexOf(a) - left.indexOf(b));
      if (again.length > 0) await this.deps.sleep(retryDelay(attempt, undefined, this.deps.retry, this.deps.random));
      left = again;
    }
  }

  private async alone(topic: string, p: Pending): Promise<void> {
    try {
      p.resolve(await this.deps.sendOne(topic, p.entry));
    } catch (error) {
      p.reject(error);
    }
  }
}
