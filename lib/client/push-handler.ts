/**
 * The endpoint of a push group (SPEC §3.9): Sluice POSTs
 * `{ type: "messages", data: { group, messages: [...] } }`, signed per
 * Standard Webhooks with the group's secret, and reads the answer — a 2xx
 * commits every message except those listed in `{ retry: [messageId…] }`;
 * anything else (or no answer within the group's `timeoutSeconds`) retries
 * them all per the group's retry policy.
 *
 * `createPushHandler` verifies the signature first (401 otherwise), parses
 * the body (400 if it is not a push), calls your handler with the messages,
 * their bodies decoded per `encoding`, and answers 200 `{ retry }` with the
 * ids your handler asked to retry, or 500 if it threw. Serve it from Node
 * `http` / Express (`requestListener`) or from a Lambda function URL
 * (`lambdaHandler`).
 */
import type { Delivered } from './types.js';
import {
  DEFAULT_TOLERANCE_SECONDS,
  headerOf,
  jsonAnswer,
  readWebhook,
  secretList,
  serveWebhook,
  webhookVerifier,
  type WebhookEndpoint,
  type WebhookRequest,
} from './webhook-endpoint.js';

/** A pushed message: a delivered message without a lease, `body` decoded — a string for `utf8`, the bytes for `base64`. */
export type PushedMessage = Omit<Delivered, 'receiptHandle' | 'body' | 'encoding'> & ({ encoding: 'utf8'; body: string } | { encoding: 'base64'; body: Buffer });

export interface PushContext {
  /** The push group the messages were delivered to. */
  group: string;
  /** The request's `webhook-id`: new for every request, retries included. */
  webhookId: string;
}

/** What the handler answers: the ids of the messages Sluice should deliver again later (each counts a failed attempt). */
export interface PushHandlerResult {
  retry?: readonly string[];
}

export type PushMessageHandler = (messages: PushedMessage[], context: PushContext) => Promise<PushHandlerResult | void> | PushHandlerResult | void;

export interface PushHandlerOptions {
  /** The push group's signing secret (`whsec_…`, shown on create and on rotate-secret). */
  secret?: string;
  /** Several secrets while rotating: a signature made with any of them is accepted. */
  secrets?: readonly string[];
  /**
   * Handles one request's messages. Return `{ retry: [messageId…] }` for the
   * messages to deliver again (on a FIFO topic Sluice also retries the later
   * messages of that shard in this request); a throw answers 500 and retries all.
   */
  handler: PushMessageHandler;
  /** How far `webhook-timestamp` may be from now (default 300 s, as in Standard Webhooks). */
  toleranceSeconds?: number;
  /** Told about rejected requests and handler failures (default: nothing). */
  onError?: (error: unknown) => void;
  /** Largest body accepted (default 32 MiB: a batch of 100 messages of 256 KiB each, with their JSON). */
  maxBodyBytes?: number;
}

export type PushHandler = WebhookEndpoint;

type PushPayload = { type: 'messages'; data: { group: string; messages: Array<Omit<Delivered, 'receiptHandle'>> } };

const isMessage = (value: unknown): value is Omit<Delivered, 'receiptHandle'> => {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return typeof m.messageId === 'string' && typeof m.topic === 'string' && typeof m.body === 'string' && (m.encoding === 'utf8' || m.encoding === 'base64');
};

function isPush(value: unknown): value is PushPayload {
  if (typeof value !== 'object' || value === null) return false;
  const { type, data } = value as { type?: unknown; data?: unknown };
  if (type !== 'messages' || typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return typeof d.group === 'string' && Array.isArray(d.messages) && d.messages.every(isMessage);
}

const PUSH = { is: isPush, name: 'push of messages', expected: 'Expected {"type":"messages","data":{group, messages: [{messageId, topic, body, encoding, …}]}}.' };

const decoded = (message: Omit<Delivered, 'receiptHandle'>): PushedMessage =>
  message.encoding === 'base64' ? { ...message, encoding: 'base64', body: Buffer.from(message.body, 'base64') } : { ...message, encoding: 'utf8', body: message.body };

/** A push group's endpoint: verify, parse, call `handler`, answer `{ retry }`. */
export function createPushHandler(options: PushHandlerOptions): PushHandler {
  if (options.secret !== undefined && options.secrets !== undefined) throw new Error('createPushHandler takes secret or secrets, not both.');
  const verify = webhookVerifier(secretList(options.secrets ?? options.secret, 'createPushHandler'), options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS);

  const handle = async (request: WebhookRequest) => {
    const read = readWebhook(verify, request, PUSH, options.onError);
    if ('response' in read) return read.response;
    const payload = read.payload;
    const ids = new Set(payload.data.messages.map((m) => m.messageId));
    try {
      const result = await options.handler(payload.data.messages.map(decoded), { group: payload.data.group, webhookId: headerOf(request.headers, 'webhook-id') ?? '' });
      const retry = result?.retry ?? [];
      if (!Array.isArray(retry)) throw new Error('handler returned a retry that is not an array of message ids.');
      // Only this request's ids: Sluice ignores others, and an answer naming them would only mislead a reader of the logs.
      return jsonAnswer(200, { retry: [...new Set(retry)].filter((id) => typeof id === 'string' && ids.has(id)) });
    } catch (error) {
      options.onError?.(error);
      return jsonAnswer(500, { error: 'The handler failed.' });
    }
  };

  return serveWebhook({ maxBodyBytes: options.maxBodyBytes ?? 32 * 1024 * 1024, onError: options.onError, handle });
}
