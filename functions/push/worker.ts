import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';
import { NAME_PATTERN } from '../../lib/domain/model.js';

const PushJob = z.object({
  group: z.string().regex(NAME_PATTERN),
  stream: z.string().max(1024).optional(),
  notBefore: z.number().int().positive().optional(),
});

/**
 * SQS consumer of the push queue: drains the push groups its jobs name
 * (lib/services/pusher.ts). A job that cannot be parsed is dropped (retrying
 * cannot fix it); a failed run is reported for its records alone and retried by SQS.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler(async (event) => {
  const jobs: Array<{ id: string; job: z.infer<typeof PushJob> }> = [];
  for (const record of event.Records) {
    const parsed = PushJob.safeParse((() => { try { return JSON.parse(record.body) as unknown; } catch { return undefined; } })());
    if (parsed.success) jobs.push({ id: record.messageId, job: parsed.data });
    else container().logger.warn('push job dropped: not a push job', { messageId: record.messageId });
  }
  try {
    await container().pusher.run(jobs.map((j) => j.job));
    return { batchItemFailures: [] };
  } catch (error) {
    container().logger.error('push run failed', { error: error as Error });
    return { batchItemFailures: jobs.map((j) => ({ itemIdentifier: j.id })) };
  }
});
