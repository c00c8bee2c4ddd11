/**
 * The HTTP transport under `SluiceClient`: one API call with its authentication
 * (bearer token or SigV4), time limit and retries.
 *
 * - Retries 429/503 and lost connections with exponential backoff and jitter,
 *   honouring Retry-After (see `retry.ts`).
 * - Errors: `SluiceApiError` (the server's problem+json, or what a proxy said)
 *   or `SluiceConnectionError` (no answer).
 */
import { SluiceApiError, SluiceConfigurationError, SluiceConnectionError } from './errors.js';
import { DEFAULT_RETRY, parseRetryAfter, RETRYABLE_STATUS, retryDelay, type ResolvedRetryOptions, type RetryOptions } from './retry.js';
import type { AwsCredentials, AwsCredentialsProvider, SigV4Signer } from './sigv4.js';
import { isAwsEndpoint, regionFromEndpoint, signingServiceOf } from './endpoint.js';
import type { Problem } from './types.js';

export type AuthMode = 'auto' | 'bearer' | 'sigv4' | 'none';

export interface SluiceClientOptions {
  /**
   * Base URL, e.g. `http://127.0.0.1:3000`, a deployed stack's `ApiUrl` output: its function URL
   * `https://<url-id>.lambda-url.<region>.on.aws/` or its HTTP API `https://<api-id>.execute-api.<region>.amazonaws.com`.
   */
  endpoint: string;
  /**
   * Where receives go, when not `endpoint`: a deployed stack's `ReceiveUrl` output — the
   * `receive` function's own function URL, at 128 MB instead of the `api` function's memory.
   * Signed and retried as `endpoint` (same `auth`, `region`, `signingService`, `credentials`).
   * @default endpoint (it answers receive too)
   */
  receiveEndpoint?: string | undefined;
  /** Bearer token (the local runtime's SLUICE_API_TOKEN). */
  token?: string | undefined;
  /**
   * `auto` (default): bearer when a token is given, SigV4 for `*.amazonaws.com` and
   * `*.lambda-url.<region>.on.aws` endpoints, otherwise no authentication.
   */
  auth?: AuthMode;
  /** SigV4: the region (default: parsed from an execute-api endpoint or a function URL). */
  region?: string | undefined;
  /**
   * SigV4: the signing name (default: `lambda` for a `*.lambda-url.<region>.on.aws` function URL,
   * `execute-api` otherwise).
   */
  signingService?: 'lambda' | 'execute-api' | undefined;
  /** SigV4: credentials or a provider (default: `fromNodeProviderChain()` of `@aws-sdk/credential-providers`). */
  credentials?: AwsCredentials | AwsCredentialsProvider | undefined;
  retry?: RetryOptions;
  /** Time limit of one attempt (default 10 s); a long-polling receive gets its `waitSeconds` on top. */
  timeoutMs?: number;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Waits between attempts (injectable for tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Randomness of the backoff jitter, in [0, 1). */
  random?: () => number;
  /**
   * How long `send` waits for more sends to the same topic before it sends them as one batch
   * request (`send-batcher.ts`): one request, one Lambda invocation and (on the HTTP API) one API
   * fee for up to 100 messages. `0` sends every message in its own request, as `send(…, { batch:
   * false })` does for one call.
   * @default 5
   */
  sendLingerMs?: number;
  /** Generates `dedupId`s (default: `crypto.randomUUID()`). */
  newId?: () => string;
  userAgent?: string;
}

export interface RequestOptions {
  /** Aborts the request (and the waits between its attempts). */
  signal?: AbortSignal;
}

export interface SendOptions extends RequestOptions {
  /**
   * `false`: this message goes in a request of its own at once, not in the topic's lingering batch
   * (and not ordered after sends still lingering there). A send with a `signal` always goes alone.
   * @default true (when the client's `sendLingerMs` is above 0)
   */
  batch?: boolean;
}

export interface CallOptions extends RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  timeoutMs?: number;
  /**
   * The call may be sent again after its answer was lost on the way back (the server did it): true
   * for GET, PUT and PATCH, and for the calls that say so (sends with their dedup ids, commits,
   * visibility changes, transaction resolutions); a seek, purge, receive, redrive, rotation or
   * DELETE repeated would act twice, so their lost answer is a SluiceConnectionError at once.
   */
  repeatable?: boolean;
}

const VERSION = '0.1.0';

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const STATUS_CODES: Record<number, [string, string]> = {
  400: ['InvalidArgument', 'Invalid argument'],
  401: ['Unauthorized', 'Unauthorized'],
  403: ['Forbidden', 'Forbidden'],
  404: ['NotFound', 'Not found'],
  409: ['Conflict', 'Conflict'],
  413: ['PayloadTooLarge', 'Payload too large'],
  429: ['Throttled', 'Throttled'],
  503: ['ServiceUnavailable', 'Service unavailable'],
};

/** Reads an error answer: problem+json from Sluice, or whatever a proxy (API Gateway's `{"message"}`) said. */
function toProblem(status: number, text: string): Problem {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed && typeof parsed === 'object') {
    // API Gateway answers {"message": …}; a Lambda function URL refusing a request itself, {"Message": …}.
    const p = parsed as Partial<Problem> & { message?: unknown; Message?: unknown };
    if (typeof p.code === 'string' && typeof p.detail === 'string') {
      return {
        type: typeof p.type === 'string' ? p.type : `urn:sluice:problem:${p.code}`,
        title: typeof p.title === 'string' ? p.title : p.code,
        status: typeof p.status === 'number' ? p.status : status,
        detail: p.detail,
        code: p.code,
        ...(Array.isArray(p.errors) ? { errors: p.errors } : {}),
      };
    }
    if (typeof p.message === 'string') text = p.message;
    else if (typeof p.Message === 'string') text = p.Message;
  }
  const [code, title] = STATUS_CODES[status] ?? [status >= 500 ? 'ServerError' : 'HttpError', `HTTP ${status}`];
  const detail = text.trim() ? text.trim().slice(0, 500) : `The server answered HTTP ${status}.`;
  return { type: `urn:sluice:problem:${code}`, title, status, detail, code };
}

/** Why a fetch got no answer, from undici's error chain: an errno code, else the innermost message. */
function connectionReason(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out';
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, message: text, cause, errors } = current as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') return code;
    if (typeof text === 'string' && text) message = text;
    // Happy eyeballs: several addresses tried, each with its own error.
    current = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return message;
}

export class HttpTransport {
  readonly endpoint: string;
  /** Time limit of one attempt, in milliseconds. */
  readonly timeoutMs: number;
  private readonly base: string;
  private readonly auth: Exclude<AuthMode, 'auto'>;
  private readonly token: string | undefined;
  private readonly retry: ResolvedRetryOptions;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly userAgent: string;
  private readonly region: string | undefined;
  private readonly signingService: 'lambda' | 'execute-api';
  private readonly credentials: AwsCredentials | AwsCredentialsProvider | undefined;
  private signer: Promise<SigV4Signer> | undefined;

  /** Checks the endpoint and the authentication asked for: a mistake is a `SluiceConfigurationError` here, not at the first call. */
  constructor(options: SluiceClientOptions) {
    let url: URL;
    try {
      url = new URL(options.endpoint);
    } catch {
      throw new SluiceConfigurationError(`The endpoint '${options.endpoint}' is not a URL (e.g. http://127.0.0.1:3000).`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new SluiceConfigurationError(`The endpoint '${options.endpoint}' must be an http(s) URL.`);
    }
    this.endpoint = options.endpoint;
    this.base = url.href.replace(/\/+$/, '');
    const mode = options.auth ?? 'auto';
    this.auth = mode !== 'auto' ? mode : options.token ? 'bearer' : isAwsEndpoint(this.base) ? 'sigv4' : 'none';
    if (this.auth === 'bearer' && !options.token) throw new SluiceConfigurationError('Bearer authentication needs a `token`.');
    this.token = options.token;
    this.region = options.region ?? regionFromEndpoint(this.base);
    this.signingService = options.signingService ?? signingServiceOf(this.base);
    this.credentials = options.credentials;
    if (this.auth === 'sigv4' && !this.region) {
      throw new SluiceConfigurationError(`SigV4 needs an AWS region and none can be read from '${options.endpoint}': pass \`region\`.`);
    }
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.userAgent = options.userAgent ?? `sluice-client/${VERSION}`;
  }

  /**
   * One API call with its retries. The body is serialized once, so every
   * attempt sends the same bytes (the same `dedupId`s).
   */
  async call<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const url = new URL(`${this.base}${path}`);
    // Percent-encoding (%20, never '+'): what SigV4's canonical query string and API Gateway agree on.
    url.search = Object.entries(options.query ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
      .join('&');
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.userAgent };
    if (body !== undefined) headers['content-type'] = 'application/json';

    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      const sent = { ...headers, ...(await this.authHeaders(method, url, headers, body)) };
      const timeout = AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await this.fetchImpl(url, { method, headers: sent, body, signal });
      } catch (error) {
        // The caller's abort is not a connection failure: pass it on as is.
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        const reason = connectionReason(error);
        if (attempt >= this.retry.maxAttempts) throw new SluiceConnectionError(this.endpoint, url.href, reason, { cause: error });
        await this.sleep(retryDelay(attempt, undefined, this.retry, this.random), options.signal);
        continue;
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        // The answer's body was lost (a reset, the time-out while reading): the server did the call.
        // Only a call safe to repeat is sent again; the others end here, as a lost connection.
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        const reason = connectionReason(error);
        const repeatable = options.repeatable ?? (method === 'GET' || method === 'PUT' || method === 'PATCH');
        if (!repeatable || attempt >= this.retry.maxAttempts) throw new SluiceConnectionError(this.endpoint, url.href, reason, { cause: error });
        await this.sleep(retryDelay(attempt, undefined, this.retry, this.random), options.signal);
        continue;
      }
      if (response.ok) {
        if (response.status === 204 || text === '') return undefined as T;
        return JSON.parse(text) as T;
      }
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (RETRYABLE_STATUS.has(response.status) && attempt < this.retry.maxAttempts) {
        await this.sleep(retryDelay(attempt, retryAfterMs, this.retry, this.random), options.signal);
        continue;
      }
      throw new SluiceApiError(toProblem(response.status, text), {
        method,
        url: url.href,
        // The local runtime's, the HTTP API's, or Lambda's (function URLs) request id.
        requestId: response.headers.get('x-request-id') ?? response.headers.get('apigw-requestid') ?? response.headers.get('x-amzn-requestid') ?? undefined,
        retryAfterSeconds: retryAfterMs === undefined ? undefined : retryAfterMs / 1000,
      });
    }
  }

  private async authHeaders(method: string, url: URL, headers: Record<string, string>, body: string | undefined): Promise<Record<string, string>> {
    switch (this.auth) {
      case 'none':
        return {};
      case 'bearer':
        return { authorization: `Bearer ${this.token}` };
      case 'sigv4': {
        this.signer ??= this.createSigner();
        const signer = await this.signer;
        try {
          return await signer.sign({ method, url, headers, body });
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new SluiceConfigurationError(`Cannot sign the request with SigV4 (AWS credentials?): ${reason}`, { cause: error });
        }
      }
    }
  }

  /**
   * One request passed on as it is (`sluice console` forwards the browser's API calls): this
   * transport's authentication added, one attempt within the time limit, the answer returned
   * whatever its status. `pathAndQuery` is appended to the endpoint (`/v1/topics?limit=10`).
   * Throws `SluiceConfigurationError` when it cannot sign, and what `fetch` throws without an answer.
   */
  async forward(method: string, pathAndQuery: string, headers: Record<string, string>, body: string | undefined): Promise<Response> {
    const url = new URL(`${this.base}${pathAndQuery}`);
    const sent = { ...headers, ...(await this.authHeaders(method, url, headers, body)) };
    return this.fetchImpl(url, { method, headers: sent, body, signal: AbortSignal.timeout(this.timeoutMs) });
  }

  /** Loads the SigV4 signer and the AWS credential chain only when a client needs them. */
  private async createSigner(): Promise<SigV4Signer> {
    const { SigV4Signer } = await import('./sigv4.js');
    return new SigV4Signer({ region: this.region ?? '', credentials: await this.awsCredentials(), service: this.signingService });
  }

  /** The AWS credentials this transport signs with: those given, or the default chain (loaded on first use). */
  async awsCredentials(): Promise<AwsCredentials | AwsCredentialsProvider> {
    let credentials = this.credentials;
    if (!credentials) {
      // An optional peer of the published SDK (@sluice/client): needed only for this default.
      const providers = await import('@aws-sdk/credential-providers').catch((error: unknown) => {
        throw new SluiceConfigurationError(
          'SigV4 signing with the default AWS credential chain needs @aws-sdk/credential-providers: install it, or pass `credentials`.',
          { cause: error },
        );
      });
      credentials = providers.fromNodeProviderChain();
    }
    return credentials;
  }
}
