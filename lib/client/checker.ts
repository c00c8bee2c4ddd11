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
 * function URL (`lambdaHandler`, payload 2.0).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
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

export interface CheckerRequest {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface CheckerResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The parts of an API Gateway HTTP API (payload 2.0) / function URL event the checker reads. */
export interface CheckerLambdaEvent {
  headers?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded?: boolean;
  requestContext?: { http?: { method?: string } };
}

export interface CheckerHandler {
  /** For `http.createServer(checker.requestListener)` or to call from your own router. */
  requestListener: RequestListener;
  /** A Lambda handler (API Gateway HTTP API or function URL, payload 2.0). */
  lambdaHandler: (event: CheckerLambdaEvent) => Promise<CheckerResponse>;
  /** The runtime-neutral core: verify, parse, check, answer. */
  handle: (request: CheckerRequest) => Promise<CheckerResponse>;
}

/** The webhook failed verification: unsigned, signed with another secret, altered, or too old. */
export class CheckerVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CheckerVerificationError';
  }
}

const STATUSES = new Set<CheckStatus>(['commit', 'rollback', 'unknown']);

const answer = (statusCode: number, body: unknown): CheckerResponse => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

function header(headers: CheckerRequest['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

function isCheck(value: unknown): value is { type: 'transaction.check'; data: TransactionCheck } {
  if (typeof value !== 'object' || value === null) return false;
  const { type, data } = value as { type?: unknown; data?: unknown };
  if (type !== 'transaction.check' || typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return typeof d.transactionId === 'string' && typeof d.messageId === 'string' && typeof d.topic === 'string';
}

export function createCheckerHandler(options: CheckerOptions): CheckerHandler {
  const secrets = Array.isArray(options.secret) ? options.secret : [options.secret];
  if (secrets.length === 0) throw new Error('createCheckerHandler needs the producer group signing secret.');
  // Constructed now, so that a malformed secret fails at start-up rather than on the first check.
  const verifiers = secrets.map((secret) => new Webhook(secret));
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;

  /** Throws CheckerVerificationError unless one of the secrets signed exactly this body. */
  const verify = (request: CheckerRequest): unknown => {
    const headers = {
      'webhook-id': header(request.headers, 'webhook-id') ?? '',
      'webhook-timestamp': header(request.headers, 'webhook-timestamp') ?? '',
      'webhook-signature': header(request.headers, 'webhook-signature') ?? '',
    };
    let last: unknown;
    for (const verifier of verifiers) {
      try {
        return verifier.verify(request.body, headers, { jsonParse: false }) ?? null;
      } catch (error) {
        last = error;
      }
    }
    const reason = last instanceof Error ? last.message : 'invalid signature';
    throw new CheckerVerificationError(`Webhook verification failed: ${reason}.`, { cause: last });
  };

  const handle = async (request: CheckerRequest): Promise<CheckerResponse> => {
    try {
      verify(request);
    } catch (error) {
      options.onError?.(error);
      return answer(401, { error: error instanceof Error ? error.message : 'invalid signature' });
    }
    let payload: unknown;
    try {
      payload = JSON.parse(request.body);
    } catch (error) {
      options.onError?.(error);
      return answer(400, { error: 'The body is not JSON.' });
    }
    if (!isCheck(payload)) {
      options.onError?.(new Error('not a transaction.check webhook'));
      return answer(400, { error: 'Expected {"type":"transaction.check","data":{transactionId, messageId, topic, …}}.' });
    }
    try {
      const status = await options.check(payload.data, header(request.headers, 'webhook-id') ?? '');
      if (!STATUSES.has(status)) throw new Error(`check() returned '${String(status)}'; expected commit, rollback or unknown.`);
      return answer(200, { status });
    } catch (error) {
      options.onError?.(error);
      return answer(500, { error: 'The check failed.' });
    }
  };

  const readBody = (req: IncomingMessage) =>
    new Promise<string | undefined>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) {
          req.removeAllListeners('data');
          req.resume();
          resolve(undefined);
        } else chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });

  const send = (res: ServerResponse, response: CheckerResponse) => {
    res.writeHead(response.statusCode, response.headers);
    res.end(response.body);
  };

  const requestListener: RequestListener = (req, res) => {
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST');
      return send(res, answer(405, { error: 'Use POST.' }));
    }
    readBody(req).then(
      async (body) => send(res, body === undefined ? answer(413, { error: 'The body is too large.' }) : await handle({ headers: req.headers, body })),
      (error: unknown) => {
        options.onError?.(error);
        if (!res.headersSent) send(res, answer(400, { error: 'The request could not be read.' }));
      },
    );
  };

  const lambdaHandler = async (event: CheckerLambdaEvent): Promise<CheckerResponse> => {
    const method = event.requestContext?.http?.method;
    if (method !== undefined && method !== 'POST') return { ...answer(405, { error: 'Use POST.' }), headers: { 'content-type': 'application/json', allow: 'POST' } };
    const raw = event.body ?? '';
    const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    if (Buffer.byteLength(body) > maxBodyBytes) return answer(413, { error: 'The body is too large.' });
    return handle({ headers: event.headers ?? {}, body });
  };

  return { requestListener, lambdaHandler, handle };
}
