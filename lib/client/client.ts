/**
 * `SluiceClient`: the v1 HTTP API as typed methods, over `fetch` (`transport.ts`).
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
import { HttpTransport, type CallOptions, type RequestOptions, type SendOptions, type SluiceClientOptions } from './transport.js';
import { SendBatcher } from './send-batcher.js';
import { DEFAULT_RETRY } from './retry.js';
import type { AwsCredentials, AwsCredentialsProvider } from './sigv4.js';
import type {
  CommitEntry,
  CommitEntryResult,
  CommitResult,
  Delivered,
  Group,
  GroupDetail,
  PurgeResult,
  SeekInput,
  SeekResult,
  GroupList,
  RedriveResult,
  MessageDetail,
  MessageList,
  PageOptions,
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

export type { AuthMode, RequestOptions, SendOptions, SluiceClientOptions } from './transport.js';

const seg = (value: string) => encodeURIComponent(value);

/** The text of a message body as bytes (base64 bodies decoded). */
export function decodeBody(message: { body: string; encoding: 'utf8' | 'base64' }): Buffer {
  return message.encoding === 'base64' ? Buffer.from(message.body, 'base64') : Buffer.from(message.body, 'utf8');
}

export class SluiceClient {
  readonly endpoint: string;
  /** Where receives go (`receiveEndpoint`, else `endpoint`). */
  readonly receiveEndpoint: string;
  private readonly transport: HttpTransport;
  /** The transport of receives: `transport` itself unless `receiveEndpoint` names another URL. */
  private readonly receiveTransport: HttpTransport;
  private readonly newId: () => string;
  /** Lingering sends (`sendLingerMs` > 0), or none. */
  private readonly batcher: SendBatcher | undefined;

  constructor(options: SluiceClientOptions) {
    this.transport = new HttpTransport(options);
    this.endpoint = this.transport.endpoint;
    this.receiveTransport = options.receiveEndpoint ? new HttpTransport({ ...options, endpoint: options.receiveEndpoint }) : this.transport;
    this.receiveEndpoint = this.receiveTransport.endpoint;
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
    const lingerMs = options.sendLingerMs ?? 5;
    if (!(Number.isFinite(lingerMs) && lingerMs >= 0)) throw new RangeError(`sendLingerMs must be a number ≥ 0, not ${String(options.sendLingerMs)}`);
    this.batcher =
      lingerMs > 0
        ? new SendBatcher({
            lingerMs,
            sendBatch: (topic, entries) => this.call('POST', `/v1/topics/${seg(topic)}/messages/batch`, { body: { entries }, repeatable: true }),
            sendOne: (topic, entry) => this.call('POST', `/v1/topics/${seg(topic)}/messages`, { body: entry, repeatable: true }),
            retry: { ...DEFAULT_RETRY, ...options.retry },
            sleep: (ms) => (options.sleep ? options.sleep(ms) : new Promise((resolve) => setTimeout(resolve, ms))),
            random: options.random ?? Math.random,
            urlOf: (topic) => `${this.endpoint.replace(/\/+$/, '')}/v1/topics/${seg(topic)}/messages/batch`,
          })
        : undefined;
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

  /** Creates or updates a topic (idempotent; changing `type`, `orderGroup` or `sequenced` → 409). */
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

  /** Issues a new signing secret for a push group (answered once); the previous one keeps signing beside it for 24 h. */
  rotateGroupSecret(name: string, options?: RequestOptions): Promise<Group> {
    return this.call('POST', `/v1/groups/${seg(name)}/rotate-secret`, options);
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

  /**
   * Brings the messages this group dead-lettered back to this group only (same `messageId`,
   * `deliveryCount` from 1); their dead-letter copies stay. One call redrives up to
   * `maxMessages` (1–1000; default: as many as the request reaches, at most 1000): while the
   * answer says `more`, call again.
   */
  redrive(group: string, redrive: { maxMessages?: number } = {}, options?: RequestOptions): Promise<RedriveResult> {
    return this.call('POST', `/v1/groups/${seg(group)}/redrive`, { ...options, body: redrive });
  }

  /**
   * Moves a group's position (standard topics): to `earliest`, `latest` or a
   * time. Leases in flight end (their handles then answer 409
   * `ReceiptHandleExpired`); messages delivered again start at `deliveryCount` 1.
   */
  seek(group: string, input: SeekInput, options?: RequestOptions): Promise<SeekResult> {
    return this.call('POST', `/v1/groups/${seg(group)}/seek`, { ...options, body: input });
  }

  /**
   * Drops every deliverable and scheduled message of a topic, for every group
   * (half messages stay; leases in flight may still commit).
   */
  purgeTopic(topic: string, options?: RequestOptions): Promise<PurgeResult> {
    return this.call('POST', `/v1/topics/${seg(topic)}/purge`, options);
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

  /**
   * Sends one message. A `dedupId` is generated when none is given. Sends to one topic within the
   * client's `sendLingerMs` (default 5 ms) go out together as one batch request, in call order, and
   * each resolves with its own result or rejects with its own error (`send-batcher.ts`);
   * `{ batch: false }` (or a `signal`) sends this one alone at once.
   */
  send(topic: string, message: SendInput, options?: SendOptions): Promise<SendResult> {
    const body = this.toSendBody(message);
    if (this.batcher && options?.batch !== false && options?.signal === undefined) return this.batcher.add(topic, body);
    const { batch: _batch, ...request } = options ?? {};
    return this.call('POST', `/v1/topics/${seg(topic)}/messages`, { ...request, body, repeatable: true });
  }

  /** Sends every lingering send now; resolves once each of them was answered. */
  flush(): Promise<void> {
    return this.batcher?.flush() ?? Promise.resolve();
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
      // Every entry carries a dedupId from its first attempt: a repeat answers the sends made.
      repeatable: true,
    });
  }

  /** Cancels a scheduled message before it becomes deliverable (409 once it is). */
  async cancelMessage(topic: string, messageId: string, options?: RequestOptions): Promise<void> {
    await this.call('DELETE', `/v1/topics/${seg(topic)}/messages/${seg(messageId)}`, options);
  }

  // ── receive, visibility, commit ──────────────────────────────────────

  /** Leases up to `maxMessages` messages; `waitSeconds > 0` long-polls. */
  async receive(group: string, input: ReceiveInput = {}, options?: RequestOptions): Promise<Delivered[]> {
    const result = await this.receiveTransport.call<{ messages: Delivered[] }>('POST', `/v1/groups/${seg(group)}/receive`, {
      ...options,
      body: input,
      timeoutMs: this.receiveTransport.timeoutMs + (input.waitSeconds ?? 0) * 1000,
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
  ): Promise<{ messages: Delivered[]; commitResults: CommitEntryResult[]; doorbell?: { queueUrl: string } }> {
    const result = await this.receiveTransport.call<ReceiveResult>('POST', `/v1/groups/${seg(group)}/receive`, {
      ...options,
      body: receiptHandles.length > 0 ? { ...input, commit: receiptHandles } : input,
      timeoutMs: this.receiveTransport.timeoutMs + (input.waitSeconds ?? 0) * 1000,
    });
    return { messages: result.messages, commitResults: result.commitResults ?? [], ...(result.doorbell ? { doorbell: result.doorbell } : {}) };
  }

  /**
   * The AWS credentials this client signs with (`credentials`, else the default chain): what
   * the `Consumer` long-polls its group's SQS doorbell with.
   */
  awsCredentials(): Promise<AwsCredentials | AwsCredentialsProvider> {
    return this.receiveTransport.awsCredentials();
  }

  /**
   * Extends a lease to `seconds` from now (the message is claimable again then, without back-off),
   * or releases it with 0 (redelivered after the group's retry back-off).
   */
  async changeVisibility(group: string, receiptHandle: string, seconds: number, options?: RequestOptions): Promise<void> {
    await this.call('POST', `/v1/groups/${seg(group)}/visibility`, {
      ...options,
      body: { receiptHandle, visibilityTimeoutSeconds: seconds },
      repeatable: true,
    });
  }

  /**
   * Gives a lease back (a negative acknowledgement, a failed attempt): the message is redelivered
   * after the group's retry back-off (`retryPolicy`; at once with `initialSeconds: 0`).
   */
  release(group: string, receiptHandle: string, options?: RequestOptions): Promise<void> {
    return this.changeVisibility(group, receiptHandle, 0, options);
  }

  /**
   * Gives a lease back unhandled (it waited behind a failed message of its FIFO shard): not a failed
   * attempt — no back-off, and the delivery does not count toward `maxDeliveries`.
   */
  async giveBack(group: string, receiptHandle: string, options?: RequestOptions): Promise<void> {
    await this.call('POST', `/v1/groups/${seg(group)}/visibility`, {
      ...options,
      body: { receiptHandle, visibilityTimeoutSeconds: 0, attempted: false },
      repeatable: true,
    });
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
      // A repeated commit answers `committed` again (and publishes nothing twice).
      repeatable: true,
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
    return this.call('POST', `/v1/transactions/${seg(transactionId)}/commit`, { ...options, repeatable: true });
  }

  /** Rolls a half message back: it is never delivered. Repeating it is idempotent. */
  rollbackTransaction(transactionId: string, options?: RequestOptions): Promise<TransactionResolution> {
    return this.call('POST', `/v1/transactions/${seg(transactionId)}/rollback`, { ...options, repeatable: true });
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
  call<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    return this.transport.call<T>(method, path, options);
  }
}
