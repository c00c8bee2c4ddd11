/**
 * The queue engine the API calls: send (sender.ts), receive with its long
 * poll (receiver.ts), visibility and commit (committer.ts), cancel of
 * scheduled messages and message queries (message-queries.ts). Deferred
 * messages enter their streams through releaser.ts; admin (topics, groups,
 * stats) lives in admin-service.ts.
 */
import type { Contention } from '../adapters/dynamodb/append-contention.js';
import { ConflictError, GroupNotFoundError, InvalidArgumentError, MessageNotFoundError, PushGroupReceiveError } from '../domain/errors.js';
import { AnswerBudget, jsonBytes } from '../domain/answer-budget.js';
import { Limits, type DeliveredMessage, type Group, type SendInput, type SendResult, type Topic } from '../domain/model.js';
import { isDeferredMessageId, noticeStream, streamId, streamNamespace, ulidOfDeferredMessageId } from '../domain/streams.js';
import { namedInOneLook, NAMED_PER_LOOK, samplesStreams } from './partition-sampler.js';
import type { Clock } from '../ports/clock.js';
import type { DoorbellQueues, DoorbellWaiter } from '../ports/doorbell.js';
import type { Notifier } from '../ports/notifier.js';
import { retryDelayMs } from '../domain/retry-policy.js';
import type { Random } from '../ports/random.js';
import type { Timers } from '../ports/timers.js';
import { CarriedCommits } from './carried-commits.js';
import type { DoorbellParker } from './doorbell-parker.js';
import { Committer, expiredReceipt, receiptAt, type CommitEntry, type CommitResult } from './committer.js';
import { requireGroup, requireTopic } from './lookups.js';
import { MessageQueries } from './message-queries.js';
import { Receiver } from './receiver.js';
import { Sender, type BatchResult } from './sender.js';
import type { Stores } from './stores.js';
import { WritePlanner } from './write-planner.js';

export type { Stores } from './stores.js';
export type { BatchResult } from './sender.js';
export type { CommitEntry, CommitResult, PublishInput } from './committer.js';

export interface QueueServiceOptions {
  /** How often a long poll looks again when nothing wakes it (ms). */
  pollIntervalMs?: number;
  /** Receives with `park: true` (docs/design.md, "Waking SDK consumers"); absent: `park` changes nothing. */
  doorbells?: Doorbells | undefined;
  /** How a send's lost races on a standard topic wait and when they answer 429 (default: 2 s budget, real time). */
  contention?: Contention | undefined;
  /** How a receive's lost claims on a FIFO shard's cursor wait (default: full jitter, real time; receiver.ts). */
  claimContention?: Contention | undefined;
  /**
   * Range claims on hot FIFO shards of concurrent groups (docs/design.md, Range claims); default on.
   * Off only for tests of the ordinary claim's contention path, which claims not eligible for a range take.
   */
  rangeClaims?: boolean | undefined;
}

/** What a parking receive uses: AWS has the queues, the local runtime a waiter. */
export interface Doorbells {
  parker: DoorbellParker;
  /** AWS: the group's SQS queue, answered at once to a parking receive that found nothing. */
  queues?: DoorbellQueues | undefined;
  /** Local runtime: a parking long poll waits on its group's doorbell instead of its topics. */
  waiter?: DoorbellWaiter | undefined;
  /**
   * The topics' activity items (`A#<topic>`): a parking receive of a wide FIFO topic reads the notice
   * streams the dispatcher stamped there first — a ring's look would otherwise read 8 of up to 256
   * notice streams by rotation and miss the notice that rang.
   */
  stamps?: { activity(topic: string): Promise<{ at: number; partitions: ReadonlyMap<number, number> }> } | undefined;
  /** Warnings: a park or queue creation that failed (the receive long-polls without a doorbell). */
  log?: ((message: string, details: Record<string, unknown>) => void) | undefined;
}

/** A parking long poll on the local runtime looks for real at least this often (ms) while no ring comes. */
export const PARKED_LOOK_EVERY_MS = 5000;

/**
 * A group's doorbell queue reported missing (`doorbellMissing`) is created again at most this often
 * per group in one container (ms): consumers of the group report it together, and a consumer whose
 * role may not read the queue hears QueueDoesNotExist too (SQS answers it for both).
 */
export const DOORBELL_REPAIR_EVERY_MS = 60_000;
/**
 * "After you create a queue, you must wait at least one second after the queue is created to be able
 * to use the queue" (SQS API Reference, CreateQueue): a doorbell created by a receive is answered no
 * sooner than this after (ms).
 */
export const QUEUE_USABLE_AFTER_MS = 1000;
/** Groups whose repair time a container keeps (cleared when full: a repair more at worst). */
const DOORBELL_REPAIRS_KEPT = 10_000;

/** A receive's answer: the messages, and the doorbell to wait on when a parking receive found none. */
export interface ReceiveAnswer {
  messages: DeliveredMessage[];
  doorbell?: { queueUrl: string } | undefined;
}

/** A long poll looks again this often (ms) when nothing wakes it and no option says otherwise. */
const DEFAULT_POLL_INTERVAL_MS = 250;

/**
 * How long before its function's timeout a receive answers (ms): leased
 * messages must reach the caller, with room for the response itself.
 */
export const RECEIVE_ANSWER_MARGIN_MS = 5000;

export interface ReceiveRequest {
  maxMessages: number;
  visibilityTimeoutSeconds?: number | undefined;
  waitSeconds: number;
  topics?: string[] | undefined;
  /** Time (ms) by which the call must answer; the long poll and the claims stop before it. */
  answerBy?: number | undefined;
  /** Bytes the answer holds besides its messages (its envelope, carried commits' results). */
  answerBytesUsed?: number | undefined;
  /** Park the group on its doorbell when nothing is found (SDK consumers; see {@link Doorbells}). */
  park?: boolean | undefined;
  /** With `park`: the doorbell queue answered before was gone when polled; the park creates it again ({@link DOORBELL_REPAIR_EVERY_MS}). */
  doorbellMissing?: boolean | undefined;
}

/** `{"messages":[]}`: the receive answer without messages. */
const RECEIVE_ENVELOPE_BYTES = jsonBytes({ messages: [] });
/** A problem's fields besides its detail, code and errors (type, title, status, their names): at most this. */
const PROBLEM_FIELDS_MAX_BYTES = 256;

/** An upper bound of the JSON bytes of carried commits' results as the API answers them (`,"commitResults":[…]`). */
const commitResultsMaxBytes = (results: CommitResult[]): number =>
  jsonBytes({ commitResults: [] }) +
  results.reduce(
    (sum, r) =>
      sum +
      1 +
      ('error' in r
        ? jsonBytes({ receiptHandle: r.receiptHandle, error: { detail: r.error.message, code: r.error.code, errors: r.error.issues } }) + PROBLEM_FIELDS_MAX_BYTES
        : jsonBytes(r)),
    0,
  );

/**
 * Per sampled topic, the streams its activity item stamped last (most recent first): a FIFO
 * topic's notice streams, a standard topic's partitions.
 */
async function stampedStreams(stamps: NonNullable<Doorbells['stamps']>, topics: Topic[]): Promise<string[]> {
  const read = await Promise.all(topics.map(async (topic) => ({ topic, partitions: (await stamps.activity(topic.name)).partitions })));
  return read.flatMap(({ topic, partitions }) =>
    [...partitions]
      .sort((a, b) => b[1] - a[1])
      // The 4 last-stamped, and every stream stamped within a minute of the last stamp (one burst of sends).
      .filter(([, at], i, all) => i < NAMED_PER_LOOK || at >= (all[0]?.[1] ?? 0) - 60_000)
      // At most 4 looks' worth: a burst wider than that is left to the sample and the next rings.
      .slice(0, 4 * NAMED_PER_LOOK)
      .map(([p]) => (topic.type === 'fifo' ? noticeStream(streamNamespace(topic), p) : streamId(topic, { kind: 'partition', partition: p }))),
  );
}

export class QueueService {
  private readonly pollIntervalMs: number;
  private readonly doorbells: Doorbells | undefined;
  private readonly sender: Sender;
  private readonly receiver: Receiver;
  private readonly committer: Committer;
  private readonly queries: MessageQueries;
  /**
   * `<group>\n<createdAt>` → when this container last created the group's doorbell queue again, and
   * from when that queue is usable: every park of the group here answers its doorbell no sooner.
   */
  private readonly doorbellRepairs = new Map<string, { at: number; usableFrom: number }>();

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    random: Random,
    private readonly notifier: Notifier,
    timers: Timers,
    options: QueueServiceOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.doorbells = options.doorbells;
    const planner = new WritePlanner(clock, random);
    this.sender = new Sender(stores, clock, random, notifier, timers, planner, options.contention);
    this.receiver = new Receiver(stores, clock, random, notifier, options.claimContention, options.rangeClaims ?? true);
    this.committer = new Committer(stores, clock, notifier, planner, random, timers);
    this.queries = new MessageQueries(stores, clock);
  }

  // ── send ──────────────────────────────────────────────────────────────

  send(topicName: string, input: SendInput): Promise<SendResult> {
    return this.sender.send(topicName, input);
  }

  /** See {@link Sender.sendBatch}. */
  sendBatch(topicName: string, inputs: SendInput[]): Promise<BatchResult[]> {
    return this.sender.sendBatch(topicName, inputs);
  }

  /** Cancels a message that is still scheduled. */
  async cancel(topicName: string, messageId: string): Promise<void> {
    const topic = await requireTopic(this.stores, topicName);
    const notFound = () => new MessageNotFoundError(`Message '${messageId}' was not found in topic '${topic.name}'.`);
    if (!isDeferredMessageId(messageId)) {
      if (await this.queries.findRecord(topic, messageId)) {
        throw new ConflictError(`Message '${messageId}' is already deliverable; only scheduled messages can be cancelled.`);
      }
      throw notFound();
    }
    const outcome = await this.stores.deferred.cancel(ulidOfDeferredMessageId(messageId), topic.name);
    if (outcome === undefined) throw notFound();
    if (!outcome.done) {
      const state = outcome.state === 'released' ? 'already deliverable' : outcome.state === 'releasing' ? 'being released' : outcome.state === 'committing' ? 'being committed' : outcome.state;
      throw new ConflictError(`Message '${messageId}' is ${state}; only scheduled messages can be cancelled.`);
    }
  }

  // ── receive ───────────────────────────────────────────────────────────

  /** The group's subscribed topic names; refuses `topics` the group does not subscribe to. */
  private subscribedTopics(group: Group, topics: string[] | undefined): Set<string> {
    const subscribed = new Set(group.subscriptions.map((s) => s.topic));
    for (const [i, topic] of (topics ?? []).entries()) {
      if (!subscribed.has(topic)) {
        throw new InvalidArgumentError(`Group '${group.name}' does not subscribe to topic '${topic}'.`, {
          issues: [{ path: `topics/${i}`, message: 'not a subscription of this group' }],
        });
      }
    }
    return subscribed;
  }

  /**
   * A receive that carries commits (`commit` in its body): every part of the
   * request is checked before anything is written, so bad input changes
   * nothing. Commits of a standard partition the receive claims from join that
   * stream's claim update (one write for both); the others are committed first,
   * as plain commits, each with its own result (docs/design.md, Carried commits).
   */
  async commitAndReceive(
    groupName: string,
    receiptHandles: string[],
    request: ReceiveRequest,
  ): Promise<{ commitResults: CommitResult[] } & ReceiveAnswer> {
    const ids = await this.stores.ids.codec();
    const receipts = receiptHandles.map((handle, i) => ({ handle, receipt: receiptAt(ids, handle, `commit/${i}`) }));
    const group = await requireGroup(this.stores, groupName);
    this.subscribedTopics(group, request.topics);
    const carried = new CarriedCommits(receipts, (handles) => this.committer.commit(group, handles.map((receiptHandle) => ({ receiptHandle, publish: [] }))));
    // The results are known only after the claims: the answer keeps room for each as if it failed.
    const worst = receiptHandles.map((receiptHandle) => ({ receiptHandle, error: expiredReceipt() }));
    const answerBytesUsed = (request.answerBytesUsed ?? RECEIVE_ENVELOPE_BYTES) + commitResultsMaxBytes(worst);
    const answer = await this.receiveOrPark(groupName, { ...request, answerBytesUsed }, carried);
    return { commitResults: carried.answers(), ...answer };
  }

  async receive(groupName: string, request: ReceiveRequest, carried?: CarriedCommits): Promise<DeliveredMessage[]> {
    return (await this.receiveOrPark(groupName, request, carried)).messages;
  }

  /**
   * A receive; with `park: true` and doorbells configured, the group is parked
   * on its topics' doorbells before the first look. On AWS a parking receive
   * that finds nothing answers at once with the group's doorbell queue (created
   * on first use) instead of long-polling; on the local runtime its long poll
   * waits on the group's in-process doorbell, rung by the dispatcher.
   */
  async receiveOrPark(groupName: string, request: ReceiveRequest, carried?: CarriedCommits): Promise<ReceiveAnswer> {
    const group = await requireGroup(this.stores, groupName);
    if (group.push) throw new PushGroupReceiveError(groupName);
    const subscribed = this.subscribedTopics(group, request.topics);
    const requested = new Set(request.topics ?? subscribed);
    const visibilityMs = (request.visibilityTimeoutSeconds ?? group.visibilityTimeoutSeconds) * 1000;
    const answerBy = request.answerBy ?? Infinity;
    const deadline = Math.min(this.clock.now() + request.waitSeconds * 1000, answerBy);
    // One budget for the whole long poll: a look that leased nothing took nothing from it.
    const budget = new AnswerBudget(Limits.answerMaxBytes, request.answerBytesUsed ?? RECEIVE_ENVELOPE_BYTES);
    const bells = request.park ? this.doorbells : undefined;
    // Before the first look: what is appended after the park carries `w` and rings; what came before, the look finds.
    const parked = bells && (bells.queues || bells.waiter) ? await this.parkOnDoorbell(bells, group, [...requested], request.doorbellMissing === true) : undefined;
    const queueUrl = parked?.queueUrl;
    const waiter = parked && !bells?.queues ? bells?.waiter : undefined;
    // A fresh park: senders with a cached topic item may append without `w` until `ringsFrom`, so the
    // doorbell is answered only after a look at or past it (a shorter wait answers without a doorbell).
    const ringsFrom = parked?.ringsFrom ?? -Infinity;
    let first = true;
    /** Stamped streams not yet led with (a look names 4 of a topic): an empty look goes on with the next ones. */
    let stamped: string[] | undefined;
    for (;;) {
      const mark = waiter ? waiter.mark(group.name) : this.notifier.mark();
      const lookedAt = this.clock.now();
      const topics = await this.stores.catalog.topics([...subscribed]);
      stamped ??= bells?.stamps ? await stampedStreams(bells.stamps, [...topics.values()].filter((t) => requested.has(t.name) && samplesStreams(t))) : [];
      const heard = namedInOneLook(stamped);
      stamped = stamped.filter((s) => !heard.includes(s));
      const messages = await this.receiver.receiveOnce(
        {
          group,
          topics,
          requested,
          visibilityMs,
          deadline: answerBy,
          budget,
          cascade: (g, stream) => this.committer.completeProtected(g, stream, []).then(() => undefined),
          // Carried commits are written by the first look of a long poll.
          ...(first && carried ? { carried } : {}),
          // A sequenced shard held below a hole: nothing appends when the hole is filled; a waiting receive looks then.
          held: (topic, until) => this.notifier.wakeAt?.([topic], until),
          // A short receive samples a wide group's ready-index buckets; a long poll's looks read them all,
          // or only the group's horizon while nothing was written to them (ready-horizon.ts).
          ...(request.waitSeconds === 0 && !request.park ? { sample: true } : { waiting: true }),
          ...(heard.length > 0 ? { heard } : {}),
        },
        request.maxMessages,
      );
      first = false;
      const now = this.clock.now();
      // A lease that runs out uncommitted makes its message claimable again without a send: after the
      // visibility and the retry back-off the claim added (docs/design.md, Retry policy).
      for (const m of messages) {
        this.notifier.wakeAt?.([m.topic], now + visibilityMs + retryDelayMs(group.retryPolicy, m.deliveryCount, group.maxDeliveries));
      }
      if (messages.length > 0) return { messages };
      if (stamped.length > 0) continue;
      if (queueUrl !== undefined && lookedAt >= ringsFrom) return { messages, doorbell: { queueUrl } };
      if (now >= deadline) return { messages };
      const until = queueUrl !== undefined && ringsFrom > now ? Math.min(ringsFrom, deadline) : deadline;
      if (waiter) {
        await waiter.wait(group.name, Math.min(PARKED_LOOK_EVERY_MS, deadline - now), mark);
        continue;
      }
      const waitMs = Math.min(this.pollIntervalMs, until - now);
      // Topics whose looks sample their streams (more than 8 partitions or notice streams, partition-sampler.ts).
      const sampled = new Set([...topics.values()].filter((t) => requested.has(t.name) && samplesStreams(t)).map((t) => t.name));
      const woken = await this.notifier.wait([...requested], waitMs, mark, sampled);
      // The wait ran out at the call's deadline and its notifier saw nothing that could have made a
      // message claimable (the activity waiter: no flagged append, no due): the call ends without a
      // last look — the caller's next call looks at once, and a look now would only repeat it
      // (docs/design.md, "Waking pull consumers": no look at the end).
      if (woken === false && queueUrl === undefined && waitMs === deadline - now) return { messages };
    }
  }

  /**
   * Creates the group's doorbell queue if it has none (AWS) and parks the
   * group on `topics`. A failure other than the group being gone (CreateQueue
   * throttled or denied, a name in SQS's 60 s reuse wait, a park the full
   * `wb` map refused or races kept failing) is logged and answers undefined:
   * the receive long-polls without a doorbell, which would not ring.
   */
  private async parkOnDoorbell(
    bells: Doorbells,
    group: Group,
    topics: readonly string[],
    missing: boolean,
  ): Promise<{ queueUrl: string | undefined; ringsFrom: number } | undefined> {
    try {
      const queue = bells.queues ? await this.doorbellQueue(bells.queues, group, missing) : undefined;
      const { ringsFrom } = await bells.parker.park(group.name, topics, group.createdAt);
      // A queue just created (again) answers nothing for its first second: its doorbell is answered after that.
      return { queueUrl: queue?.url, ringsFrom: Math.max(ringsFrom, queue?.usableFrom ?? -Infinity) };
    } catch (error) {
      if (error instanceof GroupNotFoundError) throw error;
      bells.log?.('doorbell park failed: long-polling without a doorbell', { group: group.name, topics, error });
      return undefined;
    }
  }

  /**
   * The group's doorbell queue: the one it records, created when it has none — or again when a
   * consumer found it `missing` (SQS may delete a queue with no activity for 30 days: a group
   * without consumers for a month), at most once per {@link DOORBELL_REPAIR_EVERY_MS} per group
   * here. CreateQueue of the same name and attributes answers the queue's URL when it exists and
   * creates it anew, at the same URL, when it does not (docs/design.md, "Waking SDK consumers").
   */
  private async doorbellQueue(queues: DoorbellQueues, group: Group, missing: boolean): Promise<{ url: string; usableFrom?: number }> {
    const recorded = group.doorbellQueueUrl;
    const create = async () => ({ url: await this.createDoorbell(queues, group), usableFrom: this.clock.now() + QUEUE_USABLE_AFTER_MS });
    if (recorded === undefined) return create();
    const key = `${group.name}\n${group.createdAt}`;
    const now = this.clock.now();
    const repair = this.doorbellRepairs.get(key);
    // Created again here lately (by this request's sibling, or one a moment ago): usable from then on.
    const known = { url: recorded, ...(repair !== undefined && repair.usableFrom > now ? { usableFrom: repair.usableFrom } : {}) };
    if (!missing || (repair !== undefined && now - repair.at < DOORBELL_REPAIR_EVERY_MS)) return known;
    if (this.doorbellRepairs.size >= DOORBELL_REPAIRS_KEPT) this.doorbellRepairs.clear();
    // Until CreateQueue answers, a concurrent park waits at least the queue's first second too.
    const entry = { at: now, usableFrom: now + QUEUE_USABLE_AFTER_MS };
    this.doorbellRepairs.set(key, entry);
    try {
      const made = await create();
      entry.usableFrom = made.usableFrom;
      return made;
    } catch (error) {
      // Not made (throttled, the name in SQS's 60 s wait): the next report may try again.
      this.doorbellRepairs.delete(key);
      throw error;
    }
  }

  /**
   * Creates the group's doorbell queue and records its URL on the group item
   * (conditional on the group's creation stamp, which the queue name hashes),
   * so the dispatcher finds it and delete-group removes it.
   */
  private async createDoorbell(queues: DoorbellQueues, group: Group): Promise<string> {
    const queueUrl = await queues.create(group.name, group.createdAt);
    if (!(await this.stores.catalog.recordDoorbellQueue(group.name, group.createdAt, queueUrl))) {
      // Deleted (or deleted and re-created) since it was read: this queue belongs to nobody.
      await queues.remove(queueUrl);
      throw new GroupNotFoundError(group.name);
    }
    return queueUrl;
  }

  /**
   * One claim for a push worker (no long poll): up to `maxMessages` of a
   * push group's deliverable messages, leased for `visibilityMs`, by the
   * normal claim path (delivery mode, retry back-off, dead-lettering).
   */
  async claimForPush(
    group: Group,
    maxMessages: number,
    visibilityMs: number,
    answerBy: number,
    held?: (topic: string, until: number) => void,
    heard: readonly string[] = [],
  ): Promise<DeliveredMessage[]> {
    const subscribed = new Set(group.subscriptions.map((s) => s.topic));
    const topics = await this.stores.catalog.topics([...subscribed]);
    return this.receiver.receiveOnce(
      {
        group,
        topics,
        requested: subscribed,
        visibilityMs,
        deadline: answerBy,
        budget: new AnswerBudget(Limits.answerMaxBytes, RECEIVE_ENVELOPE_BYTES),
        cascade: (g, stream) => this.committer.completeProtected(g, stream, []).then(() => undefined),
        ...(held ? { held } : {}),
        ...(heard.length > 0 ? { heard } : {}),
      },
      Math.min(maxMessages, Limits.receiveMaxMessages),
    );
  }

  // ── visibility and commit ─────────────────────────────────────────────

  /** Extends or releases a lease; resolves to when the message is claimable again (ms). */
  async changeVisibility(groupName: string, receiptHandle: string, visibilityTimeoutSeconds: number, untried = false): Promise<number> {
    const { topic } = (await this.stores.ids.codec()).openReceipt(receiptHandle);
    const claimableAt = await this.committer.changeVisibility(await requireGroup(this.stores, groupName), receiptHandle, visibilityTimeoutSeconds, untried);
    // Claimable again without a send (a release's back-off ends): a waiting receive here looks then.
    this.notifier.wakeAt?.([topic], claimableAt);
    return claimableAt;
  }

  /** Commits receipt handles; each entry may publish messages atomically with its commit. */
  async commit(groupName: string, entries: Array<CommitEntry | string>): Promise<CommitResult[]> {
    const normalized = entries.map((e) => (typeof e === 'string' ? { receiptHandle: e, publish: [] } : e));
    const group = await requireGroup(this.stores, groupName);
    return this.committer.commit(group, normalized);
  }

  // ── queries ───────────────────────────────────────────────────────────

  getMessage(topicName: string, messageId: string) {
    return this.queries.getMessage(topicName, messageId);
  }

  messagesByKey(topicName: string, key: string, limit: number, nextToken: string | undefined) {
    return this.queries.messagesByKey(topicName, key, limit, nextToken);
  }
}
