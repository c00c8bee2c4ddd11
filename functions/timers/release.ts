import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { container } from '../commons/container.js';
import { MAX_IDS_PER_WAKE } from '../../lib/ports/timers.js';

const ReleaseWake = z.object({
  kind: z.literal('release'),
  minute: z.number().int().positive(),
  second: z.number().int().positive(),
  ids: z.array(z.string().min(1)).max(MAX_IDS_PER_WAKE).optional(),
});

/**
 * SQS consumer of the delay queue: releases the scheduled messages whose ids
 * the wake-up carries (read by key, strongly consistent) that are due.
 * Releasing is idempotent, so a wake-up delivered twice releases once; a
 * failed record is reported alone (partial batch response) and retried by SQS.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      await container().timers.onRelease(ReleaseWake.parse(JSON.parse(record.body)));
    } catch (error) {
      container().logger.error('release failed', { error: error as Error, messageId: record.messageId });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
});
