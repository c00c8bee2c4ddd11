/**
 * The dispatcher path of the local runtime on a test's own table: the stream
 * poller reads DynamoDB Local's real stream with the dispatch filters and
 * hands the records to a Dispatcher whose wake route moves `A#<topic>`
 * (ActivityRoute) and records the topics it saw.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DISPATCH_FILTERS, DISPATCH_SOURCE } from '../../lib/adapters/dynamodb/dispatch-source.js';
import { latestStreamArn } from '../../lib/adapters/dynamodb/table.js';
import { TopicActivity } from '../../lib/adapters/dynamodb/topic-activity.js';
import { StreamPoller, streamsApiOf } from '../../lib/adapters/local/stream-poller.js';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import { Dispatcher } from '../../lib/services/dispatcher.js';

const silentLog = { warn: () => undefined, error: () => undefined };

export interface DispatchPoller {
  poller: StreamPoller;
  /** The topics of each wake-route call, once the activity write of that call finished. */
  routed: string[][];
  stop(): Promise<void>;
}

export async function startDispatchPoller(endpoint: string, client: DynamoDBClient, doc: DynamoDBDocumentClient, table: string): Promise<DispatchPoller> {
  const streams = new DynamoDBStreamsClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const routed: string[][] = [];
  const route = new ActivityRoute(new TopicActivity(doc, table), silentLog);
  const dispatcher = new Dispatcher(
    {
      wake: [
        {
          name: 'recording-activity',
          handle: async (segments, now) => {
            const failed = await route.handle(segments, now);
            routed.push(segments.flatMap((s) => s.topics));
            return failed;
          },
        },
      ],
    },
    { now: () => Date.now() },
    silentLog,
  );
  const poller = new StreamPoller({
    streams: streamsApiOf(streams),
    streamArn: await latestStreamArn(client, table),
    handler: (event) => dispatcher.dispatch(event.Records),
    filters: DISPATCH_FILTERS,
    startingPosition: DISPATCH_SOURCE.startingPosition,
    batchSize: DISPATCH_SOURCE.batchSize,
    bisectBatchOnError: DISPATCH_SOURCE.bisectBatchOnError,
    retryAttempts: DISPATCH_SOURCE.retryAttempts,
    pollIntervalMs: 20,
    log: silentLog,
  });
  await poller.start();
  return {
    poller,
    routed,
    stop: async () => {
      await poller.stop();
      streams.destroy();
    },
  };
}
