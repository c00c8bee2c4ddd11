/**
 * `sluice send <topic> --ndjson`: one JSON send per line (`{"body": "…", "shardKey": "…", …}`),
 * sent in batches of up to 100, one batch at a time so that a shard's lines keep their order.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { SluiceClient } from '../../lib/client/client.js';
import type { SendInput } from '../../lib/client/types.js';
import { Progress } from './progress.js';

export interface BulkFailure {
  line: number;
  code: string;
  detail: string;
}

/** A batch was refused as a whole (or got no answer): the run stopped there. */
export class BulkStoppedError extends Error {
  constructor(
    readonly summary: BulkSummary,
    /** The input line numbers of the refused batch, by entry index. */
    readonly lines: number[],
    options: { cause: unknown },
  ) {
    super(`Stopped at line ${lines[0]} after ${summary.sent} messages were sent.`, options);
    this.name = 'BulkStoppedError';
  }
}

export interface BulkSummary {
  sent: number;
  failed: number;
  batches: number;
  failures: BulkFailure[];
}

/** Counts the lines of a file with content (for the progress bar's total). */
export async function countLines(path: string): Promise<number> {
  let count = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim() !== '') count++;
  return count;
}

export async function sendNdjson(
  client: SluiceClient,
  topic: string,
  input: NodeJS.ReadableStream,
  options: { batchSize: number; total: number | undefined; signal?: AbortSignal },
): Promise<BulkSummary> {
  const summary: BulkSummary = { sent: 0, failed: 0, batches: 0, failures: [] };
  const progress = new Progress(options.total);
  const fail = (failure: BulkFailure) => {
    summary.failed++;
    if (summary.failures.length < 1000) summary.failures.push(failure);
  };
  let batch: Array<{ line: number; entry: SendInput }> = [];

  const flush = async () => {
    if (batch.length === 0) return;
    const pending = batch;
    batch = [];
    summary.batches++;
    // A request-level error (the whole batch refused, the endpoint gone) ends the run: the caller reports it.
    let results;
    try {
      ({ results } = await client.sendBatch(topic, pending.map((p) => p.entry), options.signal ? { signal: options.signal } : {}));
    } catch (error) {
      throw new BulkStoppedError(summary, pending.map((p) => p.line), { cause: error });
    }
    for (const result of results) {
      const line = pending[result.index]?.line ?? -1;
      if ('error' in result) fail({ line, code: result.error.code, detail: result.error.detail });
      else summary.sent++;
    }
    progress.update(summary.sent, summary.failed);
  };

  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const text of lines) {
      number++;
      if (text.trim() === '') continue;
      let entry: unknown;
      try {
        entry = JSON.parse(text);
      } catch (error) {
        fail({ line: number, code: 'InvalidJson', detail: error instanceof Error ? error.message : 'not JSON' });
        continue;
      }
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || typeof (entry as { body?: unknown }).body !== 'string') {
        fail({ line: number, code: 'InvalidArgument', detail: 'each line must be a JSON object with a string "body"' });
        continue;
      }
      batch.push({ line: number, entry: entry as SendInput });
      if (batch.length >= options.batchSize) await flush();
    }
    await flush();
  } finally {
    progress.finish();
  }
  return summary;
}
