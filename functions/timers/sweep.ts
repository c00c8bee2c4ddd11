import middy from '@middy/core';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';

/** Every minute (recurring schedule): releases anything overdue that a lost timer left behind. */
export const handler = middy()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler(async () => ({ released: await container().timers.sweep() }));
