import middy from '@middy/core';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';

/** Recurring (every minute): hands every half message due for a check-back to the workers. */
export const handler = middy()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler(async () => ({ dispatched: await container().transactions.sweep() }));
