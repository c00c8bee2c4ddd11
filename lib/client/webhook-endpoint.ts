/**
 * What every endpoint Sluice calls has in common — the producers' checkers
 * (SPEC §4) and push groups' endpoints (SPEC §3.9): Standard Webhooks
 * verification (`webhook-id`, `webhook-timestamp` within a tolerance,
 * `webhook-signature: v1,<base64 HMAC>`, possibly two signatures after a
 * rotation) before anything else, and the two ways to serve it — a Node
 * `http` / Express `(req, res)` listener and a Lambda function URL / API
 * Gateway HTTP API (payload 2.0) handler.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { readBody } from './read-body.js';

/** A request as the endpoint sees it, whatever served it. */
export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface WebhookResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The parts of an API Gateway HTTP API (payload 2.0) / function URL event an endpoint reads. */
export interface WebhookLambdaEvent {
  headers?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded?: boolean;
  requestContext?: { http?: { method?: string } };
}

/** A served webhook endpoint. */
export interface WebhookEndpoint {
  /** For `http.createServer(endpoint.requestListener)`, an Express route, or your own router. */
  requestListener: RequestListener;
  /** A Lambda handler (function URL or API Gateway HTTP API, payload 2.0). */
  lambdaHandler: (event: WebhookLambdaEvent) => Promise<WebhookResponse>;
  /** The runtime-neutral core: verify, parse, answer. */
  handle: (request: WebhookRequest) => Promise<WebhookResponse>;
}

/** The webhook failed verification: unsigned, signed with another secret, altered, too old or too new. */
export class WebhookVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

/** Standard Webhooks' default: a timestamp more than 5 minutes away from now is refused (replays). */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export const jsonAnswer = (statusCode: number, body: unknown): WebhookResponse => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** A header by its lower-case name, whatever case the server kept. */
export function headerOf(headers: WebhookRequest['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

/** The secrets an endpoint accepts: one, or several while a rotation's grace lasts. */
export function secretList(secret: string | readonly string[] | undefined, what: string): string[] {
  const secrets = secret === undefined ? [] : typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new Error(`${what} needs the signing secret (whsec_…).`);
  return secrets;
}

/**
 * A verifier for these secrets: it throws WebhookVerificationError unless one
 * of them signed exactly this body, id and timestamp, and the timestamp is
 * within `toleranceSeconds` of now. The HMAC is the `standardwebhooks`
 * package's; the timestamp window is checked here because that package fixes
 * it at 5 minutes.
 */
export function webhookVerifier(secrets: readonly string[], toleranceSeconds = DEFAULT_TOLERANCE_SECONDS): (request: WebhookRequest) => void {
  if (!(toleranceSeconds > 0)) throw new Error('toleranceSeconds must be a positive number.');
  // Constructed now, so that a malformed secret fails at start-up rather than on the first call.
  const signers = secrets.map((secret) => new Webhook(secret));
  return (request) => {
    const id = headerOf(request.headers, 'webhook-id');
    const timestamp = headerOf(request.headers, 'webhook-timestamp');
    const signatures = headerOf(request.headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Webhook verification failed: missing webhook-id, webhook-timestamp or webhook-signature.');
    const seconds = /^\d{1,15}$/.test(timestamp) ? Number(timestamp) : NaN;
    if (Number.isNaN(seconds)) throw new WebhookVerificationError('Webhook verification failed: webhook-timestamp is not a number of seconds.');
    const skew = Math.floor(Date.now() / 1000) - seconds;
    if (skew > toleranceSeconds) throw new WebhookVerificationError(`Webhook verification failed: timestamp ${skew} s old (tolerance ${toleranceSeconds} s).`);
    if (-skew > toleranceSeconds) throw new WebhookVerificationError(`Webhook verification failed: timestamp ${-skew} s in the future (tolerance ${toleranceSeconds} s).`);
    const passed = signatures
      .split(' ')
      .map((s) => s.split(','))
      .filter(([version, value]) => version === 'v1' && value !== undefined)
      .map(([, value]) => Buffer.from(value as string));
    const at = new Date(seconds * 1000);
    for (const signer of signers) {
      const expected = Buffer.from(signer.sign(id, at, request.body).slice('v1,'.length));
      if (passed.some((value) => value.length === expected.length && timingSafeEqual(value, expected))) return;
    }
    throw new WebhookVerificationError('Webhook verification failed: no matching signature.');
  };
}

/** The body an endpoint expects: a type guard, and what a 400 says was expected. */
export interface WebhookShape<T> {
  is: (value: unknown) => value is T;
  /** Told to `onError` when a body fails the guard. */
  name: string;
  /** The 400 answer's `error`. */
  expected: string;
}

/**
 * The first steps of every endpoint: the signature (401 unless verified),
 * then JSON (400), then the shape (400). Returns the payload, or the answer to send.
 */
export function readWebhook<T>(
  verify: (request: WebhookRequest) => void,
  request: WebhookRequest,
  shape: WebhookShape<T>,
  onError: ((error: unknown) => void) | undefined,
): { payload: T } | { response: WebhookResponse } {
  try {
    verify(request);
  } catch (error) {
    onError?.(error);
    return { response: jsonAnswer(401, { error: error instanceof Error ? error.message : 'invalid signature' }) };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(request.body);
  } catch (error) {
    onError?.(error);
    return { response: jsonAnswer(400, { error: 'The body is not JSON.' }) };
  }
  if (!shape.is(payload)) {
    onError?.(new Error(`not a ${shape.name}`));
    return { response: jsonAnswer(400, { error: shape.expected }) };
  }
  return { payload };
}

export interface ServeOptions {
  /** Largest body accepted (413 above it). */
  maxBodyBytes: number;
  /** Told about requests that could not be read. */
  onError?: (error: unknown) => void;
  /** The core: verify, parse, answer. */
  handle: (request: WebhookRequest) => Promise<WebhookResponse>;
}

/** Serves `handle` from Node `http` / Express and from a Lambda function URL; both accept POST only. */
export function serveWebhook(options: ServeOptions): WebhookEndpoint {
  const { maxBodyBytes, handle } = options;

  /**
   * The raw body: read from the stream, or — under Express with
   * `express.raw()` / `express.text()` in front — the Buffer or string the
   * middleware kept. A body another middleware already parsed into an object
   * cannot be verified (the signature covers the exact bytes).
   */
  const rawBody = (req: IncomingMessage & { body?: unknown }): Promise<string | undefined> => {
    if (Buffer.isBuffer(req.body)) return Promise.resolve(req.body.length > maxBodyBytes ? undefined : req.body.toString('utf8'));
    if (typeof req.body === 'string') return Promise.resolve(Buffer.byteLength(req.body) > maxBodyBytes ? undefined : req.body);
    if (req.body !== undefined && req.readableEnded) {
      return Promise.reject(new Error('The request body was already parsed by another middleware; mount this handler with express.raw({ type: "*/*" }) or before any body parser.'));
    }
    return readBody(req, maxBodyBytes).then((body) => (body === 'too-large' ? undefined : body.toString('utf8')));
  };

  const send = (res: ServerResponse, response: WebhookResponse) => {
    res.writeHead(response.statusCode, response.headers);
    res.end(response.body);
  };

  const requestListener: RequestListener = (req, res) => {
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST');
      return send(res, jsonAnswer(405, { error: 'Use POST.' }));
    }
    rawBody(req).then(
      async (body) => send(res, body === undefined ? jsonAnswer(413, { error: 'The body is too large.' }) : await handle({ headers: req.headers, body })),
      (error: unknown) => {
        options.onError?.(error);
        if (!res.headersSent) send(res, jsonAnswer(req.readableEnded ? 500 : 400, { error: 'The request could not be read.' }));
      },
    );
  };

  const lambdaHandler = async (event: WebhookLambdaEvent): Promise<WebhookResponse> => {
    const method = event.requestContext?.http?.method;
    if (method !== undefined && method !== 'POST') return { ...jsonAnswer(405, { error: 'Use POST.' }), headers: { 'content-type': 'application/json', allow: 'POST' } };
    const raw = event.body ?? '';
    const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    if (Buffer.byteLength(body) > maxBodyBytes) return jsonAnswer(413, { error: 'The body is too large.' });
    return handle({ headers: event.headers ?? {}, body });
  };

  return { requestListener, lambdaHandler, handle };
}
