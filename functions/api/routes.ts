/**
 * The v1 route table: one Lambda handler module per route. The local gateway
 * serves it, the CDK stack deploys it, the OpenAPI document describes it.
 */
import type { z } from 'zod';
import * as s from './schemas.js';

export interface RouteDef {
  /** Stable identifier; also the handler module's file name under functions/api/. */
  entry: string;
  method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';
  path: string;
  summary: string;
  /** false only for /health. */
  auth: boolean;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  status: number;
  response?: z.ZodType;
  /** Headers of the success response: name → description. */
  headers?: Record<string, string>;
  /** Problem codes this route answers with besides validation and auth errors. */
  errors?: number[];
}

export const routes: RouteDef[] = [
  { entry: 'health', method: 'GET', path: '/health', summary: 'Liveness check (no authentication).', auth: false, status: 200, response: s.HealthSchema },
  { entry: 'openapi', method: 'GET', path: '/v1/openapi.json', summary: 'This API description (OpenAPI 3.1).', auth: true, status: 200, response: s.OpenApiSchema },
  { entry: 'list-topics', method: 'GET', path: '/v1/topics', summary: 'List topics.', auth: true, query: s.PageQuery, status: 200, response: s.TopicListSchema },
  { entry: 'put-topic', method: 'PUT', path: '/v1/topics/{topic}', summary: 'Create a topic, or replace its settings (those left out take their defaults).', auth: true, params: s.TopicParams, body: s.PutTopicBody, status: 200, response: s.TopicSchema, errors: [409] },
  { entry: 'patch-topic', method: 'PATCH', path: '/v1/topics/{topic}', summary: 'Change only the given settings of a topic (type, orderGroup and sequenced never change: 409).', auth: true, params: s.TopicParams, body: s.PatchTopicBody, status: 200, response: s.TopicSchema, errors: [404, 409] },
  { entry: 'get-topic', method: 'GET', path: '/v1/topics/{topic}', summary: 'Get a topic with counts.', auth: true, params: s.TopicParams, status: 200, response: s.TopicDetailSchema, errors: [404] },
  { entry: 'delete-topic', method: 'DELETE', path: '/v1/topics/{topic}', summary: 'Delete a topic and its messages.', auth: true, params: s.TopicParams, status: 204, errors: [404] },
  { entry: 'purge-topic', method: 'POST', path: '/v1/topics/{topic}/purge', summary: 'Drop every deliverable and scheduled message of a topic, for every group (half messages stay; leases in flight may still commit).', auth: true, params: s.TopicParams, status: 200, response: s.PurgeResultSchema, errors: [404] },
  { entry: 'send-message', method: 'POST', path: '/v1/topics/{topic}/messages', summary: 'Send a message.', auth: true, params: s.TopicParams, body: s.SendBody, status: 201, response: s.SendResultSchema, headers: { Location: 'The new message: /v1/topics/{topic}/messages/{messageId}' }, errors: [404, 413, 429, 503] },
  { entry: 'send-batch', method: 'POST', path: '/v1/topics/{topic}/messages/batch', summary: 'Send up to 100 messages.', auth: true, params: s.TopicParams, body: s.SendBatchBody, status: 200, response: s.SendBatchResultSchema, errors: [404, 413, 429, 503] },
  { entry: 'list-messages', method: 'GET', path: '/v1/topics/{topic}/messages', summary: 'Find messages by key, newest first.', auth: true, params: s.TopicParams, query: s.KeyQuery, status: 200, response: s.MessageListSchema, errors: [404] },
  { entry: 'get-message', method: 'GET', path: '/v1/topics/{topic}/messages/{messageId}', summary: 'Get a message and its delivery state per group.', auth: true, params: s.MessageParams, status: 200, response: s.MessageDetailSchema, errors: [404] },
  { entry: 'cancel-message', method: 'DELETE', path: '/v1/topics/{topic}/messages/{messageId}', summary: 'Cancel a scheduled message.', auth: true, params: s.MessageParams, status: 204, errors: [404, 409] },
  { entry: 'list-groups', method: 'GET', path: '/v1/groups', summary: 'List consumer groups.', auth: true, query: s.PageQuery, status: 200, response: s.GroupListSchema },
  { entry: 'put-group', method: 'PUT', path: '/v1/groups/{group}', summary: 'Create a consumer group, or replace its settings (those left out take their defaults; an existing group keeps its deliveryMode).', auth: true, params: s.GroupParams, body: s.PutGroupBody, status: 200, response: s.GroupSchema, errors: [404, 409] },
  { entry: 'patch-group', method: 'PATCH', path: '/v1/groups/{group}', summary: 'Change only the given settings of a consumer group (subscriptions, when given, is the whole new list).', auth: true, params: s.GroupParams, body: s.PatchGroupBody, status: 200, response: s.GroupSchema, errors: [404, 409] },
  { entry: 'get-group', method: 'GET', path: '/v1/groups/{group}', summary: 'Get a consumer group with statistics.', auth: true, params: s.GroupParams, status: 200, response: s.GroupDetailSchema, errors: [404] },
  { entry: 'delete-group', method: 'DELETE', path: '/v1/groups/{group}', summary: 'Delete a consumer group: its positions and leases in flight end (later commits answer 404); its dead-letter topic stays.', auth: true, params: s.GroupParams, status: 204, errors: [404] },
  { entry: 'seek-group', method: 'POST', path: '/v1/groups/{group}/seek', summary: 'Move a group on its topics (standard and FIFO) to the earliest retained message, past the latest, or to a time; leases in flight end (their handles answer 409).', auth: true, params: s.GroupParams, body: s.SeekBody, status: 200, response: s.SeekResultSchema, errors: [404, 409] },
  { entry: 'rotate-group-secret', method: 'POST', path: '/v1/groups/{group}/rotate-secret', summary: "Issue a new signing secret for a push group; the previous one keeps signing next to it for 24 h.", auth: true, params: s.GroupParams, status: 200, response: s.GroupSchema, errors: [404] },
  { entry: 'put-producer', method: 'PUT', path: '/v1/producers/{producerGroup}', summary: 'Create or update a producer group (its checker webhook).', auth: true, params: s.ProducerParams, body: s.PutProducerBody, status: 200, response: s.ProducerSchema },
  { entry: 'list-producers', method: 'GET', path: '/v1/producers', summary: 'List producer groups (never their secrets).', auth: true, query: s.PageQuery, status: 200, response: s.ProducerListSchema },
  { entry: 'delete-producer', method: 'DELETE', path: '/v1/producers/{producerGroup}', summary: 'Delete a producer group; 409 ProducerInUse while it has unresolved half messages (also those kept after maxChecks).', auth: true, params: s.ProducerParams, status: 204, errors: [404, 409] },
  { entry: 'get-producer', method: 'GET', path: '/v1/producers/{producerGroup}', summary: 'Get a producer group.', auth: true, params: s.ProducerParams, status: 200, response: s.ProducerSchema, errors: [404] },
  { entry: 'rotate-secret', method: 'POST', path: '/v1/producers/{producerGroup}/rotate-secret', summary: 'Issue a new signing secret.', auth: true, params: s.ProducerParams, status: 200, response: s.ProducerSchema, errors: [404] },
  { entry: 'commit-transaction', method: 'POST', path: '/v1/transactions/{transactionId}/commit', summary: 'Commit a half message.', auth: true, params: s.TransactionParams, status: 200, response: s.TransactionResolutionSchema, errors: [404, 409] },
  { entry: 'rollback-transaction', method: 'POST', path: '/v1/transactions/{transactionId}/rollback', summary: 'Roll a half message back.', auth: true, params: s.TransactionParams, status: 200, response: s.TransactionResolutionSchema, errors: [404, 409] },
  { entry: 'get-transaction', method: 'GET', path: '/v1/transactions/{transactionId}', summary: 'A transaction and its check-backs.', auth: true, params: s.TransactionParams, status: 200, response: s.TransactionSchema, errors: [404] },
  { entry: 'receive', method: 'POST', path: '/v1/groups/{group}/receive', summary: 'Receive messages (long polling with waitSeconds).', auth: true, params: s.GroupParams, body: s.ReceiveBody, status: 200, response: s.ReceiveResultSchema, errors: [404, 429, 503] },
  { entry: 'visibility', method: 'POST', path: '/v1/groups/{group}/visibility', summary: 'Extend or release a lease.', auth: true, params: s.GroupParams, body: s.VisibilityBody, status: 204, errors: [404, 409] },
  { entry: 'redrive', method: 'POST', path: '/v1/groups/{group}/redrive', summary: "Bring the messages this group dead-lettered back to this group only (same messageId, deliveryCount from 1); the dead-letter copies stay.", auth: true, params: s.GroupParams, body: s.RedriveBody, status: 200, response: s.RedriveResultSchema, errors: [404, 429, 503] },
  { entry: 'commit', method: 'POST', path: '/v1/groups/{group}/commit', summary: 'Commit received messages.', auth: true, params: s.GroupParams, body: s.CommitBody, status: 200, response: s.CommitResultSchema, errors: [404, 429, 503] },
];
