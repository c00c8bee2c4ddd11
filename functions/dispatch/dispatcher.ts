import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { container } from '../commons/container.js';
import { appendContentionMetrics } from '../commons/append-metrics.js';

/**
 * The table stream's trigger: every segment INSERT that carries a flag
 * (`w`, `nf`), in batches of one shard. Answers a partial batch response
 * naming the records to retry. Locally, lib/adapters/local/stream-poller.ts
 * invokes it with the same event, read from DynamoDB Local's stream.
 */
export const handler = middy<DynamoDBStreamEvent, DynamoDBBatchResponse>()
  .use(appendContentionMetrics(() => container().appendMeter, () => container().logger))
  .handler((event) => container().dispatcher.dispatch(event.Records));
