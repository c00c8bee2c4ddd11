/**
 * The transaction checker endpoint (SPEC §4): Sluice POSTs a Standard Webhooks
 * signed `transaction.check` for a half message left unresolved, and the
 * producer answers `{ status: "commit" | "rollback" | "unknown" }` from its
 * own database.
 *
 * `createCheckerHandler` verifies the signature (`webhook-id`,
 * `webhook-timestamp` within 5 minutes, `webhook-signature: v1,<base64 HMAC>`)
 * before anything else, then calls your `check`. Serve it from Node's `http`
 * (`requestListener`) or from a Lambda behind API Gateway HTTP API / a
 * function URL (`lambdaHandler`, payload 2.0). Verification and both
 * adapters are `webhook-endpoint.ts`, shared with `createPushHandler`.
 */
import {
  headerOf as header,
  jsonAnswer as answer,
  readWebhook,
  secretList,
  serveWebhook,
  webhookVerifier,
  WebhookVerificationError,
  type WebhookEndpoint,
  type WebhookLambdaEvent,
  type WebhookRequest,
  type WebhookResponse,
} from './webhook-endpoint.js';
import type { CheckStatus, TransactionCheck } from './types.js';

export interface CheckerOptions {
  /**
   * The producer group's signing secret(s) (`whsec_…`). Give two while rotating:
   * a signature made with any of them is accepted.
   */
  secret: string | string[];
  /** Looks the transaction up in your database. A throw answers 500, which Sluice counts as `unknown`. */
  check: (check: TransactionCheck, webhookId: string) => Promise<CheckStatus> | CheckStatus;
  /** Told about rejected requests and failed checks (default: nothing). */
  onError?: (error: unknown) => void;
  /** Largest body accepted (default 1 MiB). */
  maxBodyBytes?: number;
}

export type CheckerRequest = WebhookRequest;
export type CheckerResponse = WebhookResponse;
/** The parts of an API Gateway HTTP API (payload 2.0) / function URL event the checker reads. */
export type CheckerLambdaEvent = WebhookLambdaEvent;
export type CheckerHandler = WebhookEndpoint;

/** The webhook failed verification (the same class `createPushHandler` rejects with). */
export const CheckerVerificationError = WebhookVerificationError;
export type CheckerVerificationError = WebhookVerificationError;

const STATUSES = new Set<CheckStatus>(['commit', 'rollback', 'unknown']);

function isCheck(value: unknown): value is { type: 'transaction.check'; data: TransactionCheck } {
  if (typeof value !== 'object' || value === null) return false;
  const { type, data } = value as { type?: unknown; data?: unknown };
  if (type !== 'transaction.check' || typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return typeof d.transactionId === 'string' && typeof d.messageId === 'string' && typeof d.topic === 'string';
}

const CHECK = { is: isCheck, name: 'transaction.check webhook', expected: 'Expected {"type":"transaction.check","data":{transactionId, messageId, topic, …}}.' };

export function createCheckerHandler(options: CheckerOptions): CheckerHandler {
  const verify = webhookVerifier(secretList(options.secret, 'createCheckerHandler'));

  const handle = async (request: CheckerRequest): Promise<CheckerResponse> => {
    const read = readWebhook(verify, request, CHECK, options.onError);
    if ('response' in read) return read.response;
    const payload = read.payload;
    try {
      const status = await options.check(payload.data, header(request.headers, 'webhook-id') ?? '');
      if (!STATUSES.has(status)) throw new Error(`check() returned '${String(status)}'; expected commit, rollback or unknown.`);
      return answer(200, { status });
    } catch (error) {
      options.onError?.(error);
      return answer(500, { error: 'The check failed.' });
    }
  };

  return serveWebhook({ maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024, onError: options.onError, handle });
}
