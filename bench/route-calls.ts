/**
 * What the bench's own endpoints share with the API's handlers: reading a request body, and the
 * receive route's service call (functions/api/receive.ts) on a container of the bench's choosing —
 * the AWS-mode receiver of the idle rows (aws-mode-receiver.ts) and the scale rows' client
 * containers (client-containers.ts) serve receives with it.
 */
import type { IncomingMessage } from 'node:http';
import type { Container } from '../functions/commons/container.js';
import { commitResultsOf } from '../functions/api/convert.js';
import { ReceiveBody } from '../functions/api/schemas.js';
import { RECEIVE_ANSWER_MARGIN_MS } from '../lib/services/queue-service.js';

/** The api function's timeout behind a function URL (cdk: receive's 28 s): when a receive must answer by. */
export const FUNCTION_TIMEOUT_MS = 28_000;

export const RECEIVE_PATH = /^\/v1\/groups\/([^/]+)\/receive$/;

/** A request's whole body as text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** POST /v1/groups/{group}/receive on container `c`, as its handler answers it (200 body); throws what the handler would. */
export async function receiveOn(c: Container, group: string, body: unknown) {
  const { commit, ...rest } = ReceiveBody.parse(body);
  const request = { ...rest, answerBy: Date.now() + FUNCTION_TIMEOUT_MS - RECEIVE_ANSWER_MARGIN_MS };
  if (!commit) {
    const { messages, doorbell } = await c.queue.receiveOrPark(group, request);
    return { messages, ...(doorbell ? { doorbell } : {}) };
  }
  const { commitResults, messages, doorbell } = await c.queue.commitAndReceive(group, commit, request);
  return { messages, commitResults: commitResultsOf(commitResults), ...(doorbell ? { doorbell } : {}) };
}
