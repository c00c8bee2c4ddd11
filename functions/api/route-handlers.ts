/**
 * Every route handler by its route entry, imported statically so that one bundle
 * (functions/api/function-url.ts) holds them all. test/integration/function-url.test.ts checks
 * that it names exactly the entries of the route table.
 */
import type { RouteHandler } from '../commons/function-url-router.js';
import { handler as health } from './health.js';
import { handler as openapi } from './openapi.js';
import { handler as listTopics } from './list-topics.js';
import { handler as putTopic } from './put-topic.js';
import { handler as patchTopic } from './patch-topic.js';
import { handler as getTopic } from './get-topic.js';
import { handler as deleteTopic } from './delete-topic.js';
import { handler as purgeTopic } from './purge-topic.js';
import { handler as sendMessage } from './send-message.js';
import { handler as sendBatch } from './send-batch.js';
import { handler as listMessages } from './list-messages.js';
import { handler as getMessage } from './get-message.js';
import { handler as cancelMessage } from './cancel-message.js';
import { handler as listGroups } from './list-groups.js';
import { handler as putGroup } from './put-group.js';
import { handler as patchGroup } from './patch-group.js';
import { handler as getGroup } from './get-group.js';
import { handler as deleteGroup } from './delete-group.js';
import { handler as seekGroup } from './seek-group.js';
import { handler as putProducer } from './put-producer.js';
import { handler as listProducers } from './list-producers.js';
import { handler as deleteProducer } from './delete-producer.js';
import { handler as getProducer } from './get-producer.js';
import { handler as rotateSecret } from './rotate-secret.js';
import { handler as rotateGroupSecret } from './rotate-group-secret.js';
import { handler as commitTransaction } from './commit-transaction.js';
import { handler as rollbackTransaction } from './rollback-transaction.js';
import { handler as getTransaction } from './get-transaction.js';
import { handler as receive } from './receive.js';
import { handler as visibility } from './visibility.js';
import { handler as redrive } from './redrive.js';
import { handler as commit } from './commit.js';

export type { RouteHandler };

export const routeHandlers: Readonly<Record<string, RouteHandler>> = {
  health: health,
  openapi: openapi,
  'list-topics': listTopics,
  'put-topic': putTopic,
  'patch-topic': patchTopic,
  'get-topic': getTopic,
  'delete-topic': deleteTopic,
  'purge-topic': purgeTopic,
  'send-message': sendMessage,
  'send-batch': sendBatch,
  'list-messages': listMessages,
  'get-message': getMessage,
  'cancel-message': cancelMessage,
  'list-groups': listGroups,
  'put-group': putGroup,
  'patch-group': patchGroup,
  'get-group': getGroup,
  'delete-group': deleteGroup,
  'seek-group': seekGroup,
  'rotate-group-secret': rotateGroupSecret,
  'put-producer': putProducer,
  'list-producers': listProducers,
  'delete-producer': deleteProducer,
  'get-producer': getProducer,
  'rotate-secret': rotateSecret,
  'commit-transaction': commitTransaction,
  'rollback-transaction': rollbackTransaction,
  'get-transaction': getTransaction,
  receive: receive,
  visibility: visibility,
  redrive: redrive,
  commit: commit,
};
