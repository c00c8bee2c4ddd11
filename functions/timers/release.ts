import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';
import { MAX_IDS_PER_WAKE } from '../../lib/ports/timers.js';

const ReleaseWake = z.object({
  kind: z.literal('release'),
  minute: z.number().int().positive(),
  second: z.number().int().positive(),
  ids: z.array(z.string().min(1)).max(MAX_IDS_PER_WAKE).optional(),
});
type ReleaseWake = z.infer<typeof ReleaseWake>;

/**
 * SQS consumer of the delay queue: releases the scheduled messages whose ids
 * the wake-up carries (read by key, strongly consistent) that are due.
 * Records of one due second run together, so the timer service releases
 * them in one flight (one append path per second, no races between them);
 * seconds run one after the other, earliest first. Releasing is idempotent,
 * so a wake-up delivered twice releases once; a failed record is reported
 * alone (partial batch response) and retried by SQS.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler(async (event) => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  const fail = (record: SQSRecord, error: unknown) => {
    container().logger.error('release failed', { error: error as Error, messageId: record.messageId });
    failures.push({ itemIdentifier: record.messageId });
  };
  const bySecond = new Map<number, Array<{ record: SQSRecord; wake: ReleaseWake }>>();
  for (const record of event.Records) {
    try {
      const wake = ReleaseWake.parse(JSON.parse(record.body));
      bySecond.set(wake.second, [...(bySecond.get(wake.second) ?? []), { record, wake }]);
    } catch (error) {
      fail(record, error);
    }
  }
  for (const second of [...bySecond.keys()].sort((a, b) => a - b)) {
    await Promise.all(
      bySecond.get(second)!.map(({ record, wake }) => container().timers.onRelease(wake).catch((error: unknown) => fail(record, error))),
    );
  }
  return { batchItemFailures: failures };
});
