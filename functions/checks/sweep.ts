import middy from '@middy/core';
import { container } from '../commons/container.js';

/** Recurring (every minute): hands every half message due for a check-back to the workers. */
export const handler = middy().handler(async () => ({ dispatched: await container().transactions.sweep() }));
