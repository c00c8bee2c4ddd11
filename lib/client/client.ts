/**
 * `SluiceClient`: the v1 HTTP API as typed methods, over `fetch`.
 *
 * - Authentication: a bearer token (the local runtime's `SLUICE_API_TOKEN`),
 *   or SigV4 with credentials from the AWS default chain for a deployed stack.
 * - Retries 429/503 and lost connections with exponential backoff and jitter,
 *   honouring Retry-After (see `retry.ts`).
 * - Sends without a `dedupId` get one (a UUID) before the first attempt, so a
 *   retried send is stored once.
 * - Errors: `SluiceApiError` (the server's problem+json) or
 *   `SluiceConnectionError` (no answer).
 */
import { SluiceApiError, SluiceConfigurationError, SluiceConnectionError } from './errors.js';
import { DEFAULT_RETRY, parseRetryAfter, RETRYABLE_STATUS, retryDelay, type ResolvedRetryOptions, type RetryOptions } from './retry.js';
import type { AwsCredentials, AwsCredentialsProvider, SigV4Signer } from './sigv4.js';
import { isAwsEndpoint, regionFromEndpoint } from './endpoint.js';
import type {
  CommitEntry,
  CommitEntryResult,
  CommitResult,
  Delivered,
  Group,
  GroupDetail,
  GroupList,
  MessageDetail,
  MessageList,
  PageOptions,
  Problem,
  Producer,
  PatchGroupInput,
  ProducerList,
  PatchTopicInput,
  PutGroupInput,
  PutProducerInput,
  PutTopicInput,
  ReceiveInput,
  ReceiveResult,
  SendBatchResult,
  SendBody,
  SendInput,
  SendResult,
  Topic,
  TopicDetail,
  TopicList,
  Transaction,
  TransactionResolution,
} from './types.js';

export type AuthMode = 'auto' | 'bearer' | 'sigv4' | 'none';

export interface SluiceClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:3000` or `https://<api-id>.execute-api.<region>.amazonaws.com`. */
  endpoint: string;
  /** Bearer token (the local runtime's SLUICE_API_TOKEN). */
  token?: string | undefined;
  /**
   * `auto` (default): bearer when a token is given, SigV4 for `*.amazonaws.com`
   * endpoints, otherwise no authentication.
   */
  auth?: AuthMode;
  /** SigV4: the region (default: parsed from an execute-api endpoint). */
  region?: string | undefined;
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
  /** Generates `dedupId`s (default: `crypto.randomUUID()`). */
  newId?: () => string;
  userAgent?: string;
}

export interface RequestOptions {
  /** Aborts the request (and the waits between its attempts). */
  signal?: AbortSignal;
}

interface CallOptions extends RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  timeoutMs?: number;
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

const seg = (value: string) => encodeURIComponent(value);

/** The text of a message body as bytes (base64 bodies decoded). */
export function decodeBody(message: { body: string; encoding: 'utf8' | 'base64' }): Buffer {
  return message.encoding === 'base64' ? Buffer.from(message.body, 'base64') : Buffer.from(message.body, 'utf8');
}

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
    const p = parsed as Partial<Problem> & { message?: unknown };
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

export class SluiceClient {
  readonly endpoint: string;
  private readonly base: string;
  private readonly auth: Exclude<AuthMode, 'auto'>;
  private readonly token: string | undefined;
  private readonly retry: ResolvedRetryOptions;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly newId: () => string;
  private readonly userAgent: string;
  private readonly region: string | undefined;
  private readonly credentials: AwsCredentials | AwsCredentialsProvider | undefined;
  private signer: Promise<SigV4Signer> | undefined;

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
    this.credentials = options.credentials;
    if (this.auth === 'sigv4' && !this.region) {
      throw new SluiceConfigurationError(`SigV4 needs an AWS region and none can be read from '${options.endpoint}': pass \`region\`.`);
    }
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
    this.userAgent = options.userAgent ?? `sluice-client/${VERSION}`;
  }

  // ── health and description ───────────────────────────────────────────

  /** `GET /health` (no authentication needed). */
  health(options?: RequestOptions): Promise<{ status: 'ok' }> {
    return this.call('GET', '/health', options);
  }

  /** The API's OpenAPI 3.1 document. */
  openApi(options?: RequestOptions): Promise<Record<string, unknown>> {
    return this.call('GET', '/v1/openapi.json', options);
  }

  // ── topics ───────────────────────────────────────────────────────────

  /** Creates or updates a topic (idempotent; changing `type` or `orderGroup` → 409). */
  putTopic(name: string, topic: PutTopicInput, options?: RequestOptions): Promise<Topic> {
    return this.call('PUT', `/v1/topics/${seg(name)}`, { ...options, body: topic });
  }

  /** Changes only the given settings of a topic (PATCH); the others keep their values. */
  patchTopic(name: string, changes: PatchTopicInput, options?: RequestOptions): Promise<Topic> {
    return this.call('PATCH', `/v1/topics/${seg(name)}`, { ...options, body: changes });
  }

  /** A topic with `approximateMessages` and its `subscribers`. */
  getTopic(name: string, options?: RequestOptions): Promise<TopicDetail> {
    return this.call('GET', `/v1/topics/${seg(name)}`, options);
  }

  /** Deletes a topic and its messages. */
  async deleteTopic(name: string, options?: RequestOptions): Promise<void> {
    await this.call('DELETE', `/v1/topics/${seg(name)}`, options);
  }

  /** One page of topics. */
  listTopics(page: PageOptions = {}, options?: RequestOptions): Promise<TopicList> {
    return this.call('GET', '/v1/topics', { ...options, query: { ...page } });
  }

  /** Every topic, following `nextToken`. */
  async *iterateTopics(options?: RequestOptions): AsyncGenerator<Topic> {
    let nextToken: string | undefined;
    do {
      const page = await this.listTopics(nextToken ? { nextToken } : {}, options);
      yield* page.topics;
      nextToken = page.nextToken ?? undefined;
    } while (nextToken);
  }

  // ── consumer groups ──────────────────────────────────────────────────

  /** Creates a consumer group or replaces its settings (those left out take their defaults; an existing group keeps its `deliveryMode`). */
  putGroup(name: string, group: PutGroupInput, options?: RequestOptions): Promise<Group> {
    return this.call('PUT', `/v1/groups/${seg(name)}`, { ...options, body: group });
  }

  /** Changes only the given settings of a consumer group (PATCH); `subscriptions`, when given, replaces the list. */
  patchGroup(name: string, changes: PatchGroupInput, options?: RequestOptions): Promise<Group> {
    return this.call('PATCH', `/v1/groups/${seg(name)}`, { ...options, body: changes });
  }

  /** A group with `backlog`, `inFlight`, `pending`, `oldestMessageAgeSeconds`, `deadLettered`, `committed`. */
  getGroup(name: string, options?: RequestOptions): Promise<GroupDetail> {
    return this.call('GET', `/v1/groups/${seg(name)}`, options);
  }

  /**
   * Deletes a consumer group: its position and leases in flight end (their
   * commits then answer 404 `GroupNotFound`); its dead-letter topic stays.
   */
  async deleteGroup(name: string, options?: RequestOptions): Promise<void> {
    await this.call('DELETE', `/v1/groups/${seg(name)}`, options);
  }

  /** One page of consumer groups. */
  listGroups(page: PageOptions = {}, options?: RequestOptions): Promise<GroupList> {
    return this.call('GET', '/v1/groups', { ...options, query: { ...page } });
  }

  /** Every consumer group, following `nextToken`. */
  async *iterateGroups(options?: RequestOptions): AsyncGenerator<Group> {
    let nextToken: string | undefined;
    do {
      const page = await this.listGroups(nextToken ? { nextToken } : {}, options);
      yield* page.groups;
      nextToken = page.nextToken ?? undefined;
    } while (nextToken);
  }

  // ── producer groups (transactions) ───────────────────────────────────

  /** Creates or updates a producer group; its `signingSecret` comes back on creation only. */
  putProducer(name: string, producer: PutProducerInput, options?: RequestOptions): Promise<Producer> {
    return this.call('PUT', `/v1/producers/${seg(name)}`, { ...options, body: producer });
  }

  /** A producer group (without its secret). */
  getProducer(name: string, options?: RequestOptions): Promise<Producer> {
    return this.call('GET', `/v1/producers/${seg(name)}`, options);
  }

  /** One page of producer groups (never their secrets). */
  listProducers(page: PageOptions = {}, options?: RequestOptions): Promise<ProducerList> {
    return this.call('GET', '/v1/producers', { ...options, query: { ...page } });
  }

  /** Every producer group, following `nextToken`. */
  async *iterateProducers(options?: RequestOptions): AsyncGenerator<Producer> {
    let nextToken: string | undefined;
    do {
      const page = await this.listProducers(nextToken ? { nextToken } : {}, options);
      yield* page.producers;
      nextToken = page.nextToken ?? undefined;
    } while (nextToken);
  }

  /** Deletes a producer group; 409 `ProducerInUse` while it has unresolved half messages. */
  async deleteProducer(name: string, options?: RequestOptions): Promise<void> {
    await this.call('DELETE', `/v1/producers/${seg(name)}`, options);
  }

  /** Issues a new checker signing secret for the producer group. */
  rotateProducerSecret(name: string, options?: RequestOptions): Promise<Producer> {
    return this.call('POST', `/v1/producers/${seg(name)}/rotate-secret`, options);
  }

  // ── send ─────────────────────────────────────────────────────────────

  /** Sends one message (201). A `dedupId` is generated when none is given. */
  send(topic: string, message: SendInput, options?: RequestOptions): Promise<SendResult> {
    return this.call('POST', `/v1/topics/${seg(topic)}/messages`, { ...options, body: this.toSendBody(message) });
  }

  /**
   * Sends up to 100 messages in one request; each entry succeeds or fails on
   * its own (`{index, messageId, …}` or `{index, error}`). Entries of one shard
   * key keep their array order.
   */
  sendBatch(topic: string, messages: SendInput[], options?: RequestOptions): Promise<SendBatchResult> {
    return this.call('POST', `/v1/topics/${seg(topic)}/messages/batch`, {
      ...options,
      body: { entries: messages.map((m) => this.toSendBody(m)) },
    });
  }

  /** Cancels a scheduled message before it becomes deliverable (409 once it is). */
  async cancelMessage(topic: string, messageId: string, options?: RequestOptions): Promise<void> {
    await this.call('DELETE', `/v1/topics/${seg(topic)}/messages/${seg(messageId)}`, options);
  }

  // ── receive, visibility, commit ──────────────────────────────────────

  /** Leases up to `maxMessages` messages; `waitSeconds > 0` long-polls. */
  async receive(group: string, input: ReceiveInput = {}, options?: RequestOptions): Promise<Delivered[]> {
    const result = await this.call<{ messages: Delivered[] }>('POST', `/v1/groups/${seg(group)}/receive`, {
      ...options,
      body: input,
      timeoutMs: this.timeoutMs + (input.waitSeconds ?? 0) * 1000,
    });
    return result.messages;
  }

  /**
   * Commits `receiptHandles` and receives in one request — a consumer loop
   * that commits each batch with its next receive makes two calls per batch
   * instead of three. Each handle gets its own result, as with `commit`
   * (use `commit` for `publish`). A retried call is safe: commits are idempotent.
   */
  async receiveAndCommit(
    group: string,
    receiptHandles: string[],
    input: ReceiveInput = {},
    options?: RequestOptions,
  ): Promise<{ messages: Delivered[]; commitResults: CommitEntryResult[] }> {
    const result = await this.call<ReceiveResult>('POST', `/v1/groups/${seg(group)}/receive`, {
      ...options,
      body: receiptHandles.length > 0 ? { ...input, commit: receiptHandles } : input,
      timeoutMs: this.timeoutMs + (input.waitSeconds ?? 0) * 1000,
    });
    return { messages: result.messages, commitResults: result.commitResults ?? [] };
  }

  /** Extends a lease to `seconds` from now, or releases it with 0 (redelivered at once). */
  async changeVisibility(group: string, receiptHandle: string, seconds: number, options?: RequestOptions): Promise<void> {
    await this.call('POST', `/v1/groups/${seg(group)}/visibility`, {
      ...options,
      body: { receiptHandle, visibilityTimeoutSeconds: seconds },
    });
  }

  /** Gives a lease back at once (a negative acknowledgement): the message is redelivered. */
  release(group: string, receiptHandle: string, options?: RequestOptions): Promise<void> {
    return this.changeVisibility(group, receiptHandle, 0, options);
  }

  /**
   * Commits received messages: receipt handles, or entries with `publish`
   * (messages sent atomically with the commit). Each entry is `committed`,
   * `pending` (protected mode, waiting for older messages) or an error such as
   * `ReceiptHandleExpired`.
   */
  commit(group: string, entries: Array<string | CommitEntry>, options?: RequestOptions): Promise<CommitResult> {
    return this.call('POST', `/v1/groups/${seg(group)}/commit`, {
      ...options,
      body: { entries: entries.map((e) => (typeof e === 'string' ? { receiptHandle: e } : e)) },
    });
  }

  // ── query ────────────────────────────────────────────────────────────

  /** A message, its state, and per group its delivery state. */
  getMessage(topic: string, messageId: string, options?: RequestOptions): Promise<MessageDetail> {
    return this.call('GET', `/v1/topics/${seg(topic)}/messages/${seg(messageId)}`, options);
  }

  /** Messages carrying `key`, newest first, one page. */
  findMessages(topic: string, key: string, page: PageOptions = {}, options?: RequestOptions): Promise<MessageList> {
    return this.call('GET', `/v1/topics/${seg(topic)}/messages`, { ...options, query: { key, ...page } });
  }

  // ── transactions ─────────────────────────────────────────────────────

  /** Commits a half message: it becomes deliverable. Repeating it is idempotent. */
  commitTransaction(transactionId: string, options?: RequestOptions): Promise<TransactionResolution> {
    return this.call('POST', `/v1/transactions/${seg(transactionId)}/commit`, options);
  }

  /** Rolls a half message back: it is never delivered. Repeating it is idempotent. */
  rollbackTransaction(transactionId: string, options?: RequestOptions): Promise<TransactionResolution> {
    return this.call('POST', `/v1/transactions/${seg(transactionId)}/rollback`, options);
  }

  /** A transaction's state and the check-backs made. */
  getTransaction(transactionId: string, options?: RequestOptions): Promise<Transaction> {
    return this.call('GET', `/v1/transactions/${seg(transactionId)}`, options);
  }

  // ── plumbing ─────────────────────────────────────────────────────────

  private toSendBody(message: SendInput): SendBody {
    const { body, ...rest } = message;
    const bytes = typeof body !== 'string';
    return {
      ...rest,
      body: bytes ? Buffer.from(body).toString('base64') : body,
      ...(bytes ? { encoding: 'base64' as const } : {}),
      dedupId: message.dedupId ?? this.newId(),
    };
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
      const text = await response.text();
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
        requestId: response.headers.get('x-request-id') ?? response.headers.get('apigw-requestid') ?? undefined,
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

  /** Loads the SigV4 signer and the AWS credential chain only when a client needs them. */
  private async createSigner(): Promise<SigV4Signer> {
    const { SigV4Signer } = await import('./sigv4.js');
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
    return new SigV4Signer({ region: this.region ?? '', credentials });
  }
}
