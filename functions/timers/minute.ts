import middy from '@middy/core';
import { z } from 'zod';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';

const MinuteEvent = z.object({ kind: z.literal('minute'), minute: z.number().int().positive() });

/**
 * Target of the one-time EventBridge Scheduler schedule of a due minute
 * (its JSON input is the event): arms the second-level wake-ups of that minute.
 */
export const handler = middy()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler(async (event: unknown) => {
  const { minute } = MinuteEvent.parse(event);
  await container().timers.onMinute(minute);
  return { minute };
});
