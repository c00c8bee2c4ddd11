import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';

const CheckJob = z.object({ transactionId: z.string().min(1) });

/** SQS consumer of the check-back fan-out: one signed checker call per record. */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler(async (event) => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        await container().transactions.check(CheckJob.parse(JSON.parse(record.body)).transactionId);
      } catch (error) {
        container().logger.error('check failed', { error: error as Error, messageId: record.messageId });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
});
