import middy from '@middy/core';
import { container } from '../commons/container.js';

/** Every minute (recurring schedule): releases anything overdue that a lost timer left behind. */
export const handler = middy().handler(async () => ({ released: await container().timers.sweep() }));
