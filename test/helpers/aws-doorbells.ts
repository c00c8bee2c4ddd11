/**
 * A receive path wired for AWS doorbells as functions/commons/container.ts wires it (SQS doorbell
 * queues — mock SQSClient in the test file — and the topics' activity items), the dispatcher's
 * activity route that stamps `A#<topic>`, and a record of the streams sends appended to. For the
 * tests of rings on wide topics.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsDoorbellQueues } from '../../lib/adapters/aws/sqs-doorbell-queues.js';
import { TopicActivity } from '../../lib/adapters/dynamodb/topic-activity.js';
import { InProcessNotifier } from '../../lib/ports/notifier.js';
import { cryptoRandom, type Random } from '../../lib/ports/random.js';
import { ActivityRoute } from '../../lib/services/activity-route.js';
import { DoorbellParker } from '../../lib/services/doorbell-parker.js';
import { QueueService } from '../../lib/services/queue-service.js';
import type { Harness } from './stores.js';

export function awsDoorbells(h: Harness, random: Random = cryptoRandom) {
  const queues = new SqsDoorbellQueues(new SQSClient({ region: 'eu-west-1' }), 'sluice-test');
  const activity = new TopicActivity(h.doc, h.table);
  const aws = new QueueService(h.stores, h.clock, random, new InProcessNotifier(), h.timers, {
    pollIntervalMs: 20,
    doorbells: { parker: new DoorbellParker(h.stores.catalog, h.clock), queues, stamps: activity },
  });
  /** Segment streams (a standard topic's partitions) and notice streams sends wrote to, in order. */
  const appended: string[] = [];
  const noticed: string[] = [];
  const log = h.stores.log;
  const appendMany = log.appendMany.bind(log);
  log.appendMany = (async (parts: Array<{ stream: string }>, ...rest: unknown[]) => {
    appended.push(...parts.map((part) => part.stream));
    return (appendMany as (...a: unknown[]) => unknown)(parts, ...rest);
  }) as typeof log.appendMany;
  const appendNotices = log.appendNotices.bind(log);
  log.appendNotices = (async (stream: string, ...rest: unknown[]) => {
    noticed.push(stream);
    return (appendNotices as (...a: unknown[]) => unknown)(stream, ...rest);
  }) as typeof log.appendNotices;
  return { aws, route: new ActivityRoute(activity), appended, noticed };
}
