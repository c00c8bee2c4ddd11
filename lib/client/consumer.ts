/**
 * `Consumer`: a poll loop that leases messages of a consumer group and runs a
 * handler on each, `concurrency` at a time.
 *
 * Order: messages that carry a `shardKey` (FIFO topics) run one after another
 * per shard key, in sequence order, each only after the previous one was
 * committed; different shard keys (and every message of a standard topic) run
 * in parallel. Lanes are keyed by shard key alone, not by topic, so the
 * topics of one time-order group keep their shared order too.
 *
 * Lease lifetime of a held message (queued or running):
 *
 * ```
 *  receive            vt/2          vt/2 (extend again)     handler done
 *  ──●──────────────────●───────────────●──────────────────────●── commit(publish?)
 *    lease = vt         extend to vt    extend to vt            │
 *                                                     handler threw ─→ visibility 0 (a failed attempt:
 *                                                     redelivered after the group's retry back-off),
 *                                                     and the rest of its lane is released behind it
 * ```
 *
 * Commits ride on the next receive when one is about to start (`carryCommits`,
 * default true): while the consumer holds all it may (`maxBuffered`), a
 * finished handler's commit wakes the poll loop, whose receive carries it (the
 * server folds it into its claim: one write instead of two) and does not wait
 * (`waitSeconds` 0), so a shard's lane goes on as soon as its commit is
 * answered. A commit with `publish`, or one made while a long poll is pending,
 * is sent on its own at once.
 *
 * `stop()` stops polling, lets running handlers finish and commit, and
 * releases the messages still queued. It waits for a pending long poll to
 * answer (at most `waitSeconds`) and releases what it brought: aborting the
 * request instead (`stop({ abort: true })`) is faster, but the server may
 * still lease a message to the abandoned request — one that arrives, or one
 * this very stop releases — and it then stays invisible until its visibility
 * timeout.
 *
 * Waiting (docs/design.md, "Waking SDK consumers"): receives ask to `park`.
 * A deployed stack answers a receive that found nothing at once with the
 * group's SQS doorbell, which the consumer long-polls with its own AWS
 * credentials (ReceiveMessage, 20 s; its role needs `grantConsume`); a ring
 * (the dispatcher saw a message for the group) → DeleteMessageBatch and a
 * receive; a real receive when a message this consumer released ends its
 * retry back-off (the group's `retryPolicy`) or a lease it held ends
 * uncommitted, since neither rings (the doorbell's long poll is cut to that
 * time); and a real receive at least every 5 minutes, which keeps the park in
 * force and finds what came without a ring (a lease of another consumer that
 * crashed, for one). The local runtime answers no
 * doorbell: its long poll waits on the in-process doorbell instead. With
 * `doorbell: false`, or once the doorbell was denied (no grant, no
 * credentials), the consumer long-polls over HTTP (`waitSeconds`). A doorbell
 * found gone (QueueDoesNotExist: SQS may delete a queue idle for 30 days) is
 * asked back by the next receive, which parks at once with `doorbellMissing`
 * (the server creates the queue again, at the same URL) — once per period;
 * after any other doorbell failure (network, throttling, SQS 5xx, or the queue
 * still missing) it long-polls over HTTP until the next period
 * (`receiveEveryMs`, 5 minutes) and then parks again.
 */
import type { SluiceClient } from './client.js';
import { SluiceApiError, SluiceConfigurationError } from './errors.js';
import type { AwsCredentials, AwsCredentialsProvider } from './sigv4.js';
import { ClaimableSchedule, retryBackoffMs } from './claimable-schedule.js';
import { DOORBELL_WAIT_SECONDS, SqsDoorbellError, SqsDoorbellWaiter } from './sqs-doorbell.js';
import type { CommitEntryResult, Delivered, PublishEntry, RetryPolicy } from './types.js';

/** What a handler may return: messages to publish atomically with the commit. */
export interface HandlerResult {
  publish?: PublishEntry[];
}

export interface HandlerContext {
  group: string;
  /** Aborted when the lease was lost (an extension was refused) or the consumer is stopping hard. */
  signal: AbortSignal;
  /** Extends this message's lease to `seconds` from now. */
  extendVisibility(seconds: number): Promise<void>;
}

export type MessageHandler = (message: Delivered, context: HandlerContext) => Promise<HandlerResult | void> | HandlerResult | void;

/** Where something went wrong outside a handler's own result (`topic`: reading a subscribed topic at start, for its time-order group). */
export type ConsumerErrorKind = 'handler' | 'receive' | 'commit' | 'extend' | 'release' | 'doorbell' | 'topic';

/** A parked consumer receives for real at least this often (ms), doorbell or not. */
export const DOORBELL_RECEIVE_EVERY_MS = 5 * 60_000;

/** A doorbell still missing this soon after a receive asked it back is polled again once, a second later (ms). */
const DOORBELL_SETTLE_MS = 5_000;

/** How the consumer waits on its group's SQS doorbell (AWS). */
export interface ConsumerDoorbellOptions {
  /** Default: the client's (`credentials`, else the default chain). */
  credentials?: AwsCredentials | AwsCredentialsProvider;
  /** Default: read from the queue URL. */
  region?: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /**
   * A real receive at least this often while parked (ms, above 0 and at most {@link DOORBELL_RECEIVE_EVERY_MS}, the
   * default: a longer wait would let the group's doorbell entry lapse between refreshes; RangeError).
   */
  receiveEveryMs?: number;
}

export interface ConsumerOptions {
  group: string;
  handler: MessageHandler;
  /** Handlers running at once (default 8). */
  concurrency?: number;
  /** Messages held (queued or running) at most, leased in advance (default 2 × concurrency, ≤ 100 per receive). */
  maxBuffered?: number;
  /** Long-poll wait of each receive (default 10 s; at most 20). `stop()` may wait this long for a pending receive. */
  waitSeconds?: number;
  /** Lease length per receive (default: the group's `visibilityTimeoutSeconds`). */
  visibilityTimeoutSeconds?: number;
  /** Receive from these topics of the group only. */
  topics?: string[];
  /**
   * Handle a shard's messages one after another, in sequence order (default true).
   * `false` runs them in parallel too: for `concurrent` groups whose handlers need no order.
   */
  preserveShardOrder?: boolean;
  /** Let the next receive carry plain commits when one is about to start (default true; see above). */
  carryCommits?: boolean;
  /** Extend leases of held messages at half the visibility timeout (default true). */
  extendLeases?: boolean;
  /** Told about failed handlers, receives, commits, extensions and releases (default: console.error). */
  onError?: (error: unknown, kind: ConsumerErrorKind, message?: Delivered) => void;
  /** Called after a message was committed (`status` `committed` or `pending`). */
  onCommitted?: (message: Delivered, result: CommitEntryResult) => void;
  /** Wait on the group's SQS doorbell when the server offers one (default true; see above). `false`: HTTP long polls only. */
  doorbell?: boolean | ConsumerDoorbellOptions;
}

interface Held {
  message: Delivered;
  abort: AbortController;
  timer: NodeJS.Timeout | undefined;
  lost: boolean;
}

interface Lane {
  key: string;
  queue: Held[];
  running: boolean;
}

type ConsumerClient = Pick<SluiceClient, 'receive' | 'receiveAndCommit' | 'commit' | 'changeVisibility' | 'getGroup'> & Partial<Pick<SluiceClient, 'awsCredentials' | 'getTopic' | 'giveBack'>>;

/** A finished message whose commit waits for the next receive; `settle` lets its lane go on. */
interface Carried {
  message: Delivered;
  settle: () => void;
}

/** The lane scope of shard keys of topics whose time-order group could not be read: shared by all of them. */
const UNKNOWN_SHARD_SCOPE = '?';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });

export class Consumer {
  readonly group: string;
  private readonly client: ConsumerClient;
  private readonly options: ConsumerOptions;
  private readonly concurrency: number;
  private readonly maxBuffered: number;
  private readonly lanes = new Map<string, Lane>();
  /**
   * Per FIFO topic, what its shard keys are keys of: its time-order group's (topics of one order
   * group share one sequence per shard key), else the topic's own. A topic that could not be read
   * shares the lane of every such topic's shard key (the safe side: order kept, maybe too much).
   */
  private readonly shardScopes = new Map<string, string>();
  private held = 0;
  private running = 0;
  private visibilitySeconds = 30;
  /** The group's, read at start (the server applies it to releases; the consumer wakes when it ends). */
  private retryPolicy: RetryPolicy = { initialSeconds: 1, multiplier: 2, maxSeconds: 600 };
  private maxDeliveries = 16;
  private state: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  /** Aborts requests in flight (stop with `abort`). */
  private readonly stopSignal = new AbortController();
  /** Cuts short the pause after a failed receive. */
  private readonly pause = new AbortController();
  private loop: Promise<void> | undefined;
  /** True until the poll loop has ended (after stop). */
  private polling = true;
  private readonly settled = new Set<Promise<void>>();
  private wake: (() => void) | undefined;
  /** Commits waiting for the next receive (only while the poll loop waits for room). */
  private carry: Carried[] = [];
  /** Receives ask to park (false with `doorbell: false`, once the doorbell was denied, or until {@link parkAgainAt}). */
  private park: boolean;
  /** After a doorbell failure that was not a denial: when receives ask to park again. */
  private parkAgainAt: number | undefined;
  /** The doorbell was gone (QueueDoesNotExist): the next parking receive asks for it to be created again. */
  private doorbellMissing = false;
  /** When a parking receive last asked for that: a doorbell still missing sooner after is a failure as any other. */
  private doorbellRepairAskedAt = Number.NEGATIVE_INFINITY;
  private bell: SqsDoorbellWaiter | undefined;
  /** When messages this consumer released or held become claimable again (no ring for them). */
  private readonly claimable = new ClaimableSchedule(() => this.cutDoorbell?.abort());
  /** Ends the doorbell's current long poll early: a claimable time earlier than its end was added. */
  private cutDoorbell: AbortController | undefined;

  constructor(client: ConsumerClient, options: ConsumerOptions) {
    this.client = client;
    this.options = options;
    this.group = options.group;
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.maxBuffered = Math.max(this.concurrency, options.maxBuffered ?? this.concurrency * 2);
    this.park = options.doorbell !== false;
    const every = typeof options.doorbell === 'object' ? options.doorbell.receiveEveryMs : undefined;
    // A parked group's doorbell entry lives 10 minutes and is refreshed by real receives: more than
    // 5 minutes between them would let it lapse, and the consumer sleep until its next receive.
    if (every !== undefined && !(Number.isFinite(every) && every > 0 && every <= DOORBELL_RECEIVE_EVERY_MS)) {
      throw new RangeError(`doorbell.receiveEveryMs must be above 0 and at most ${DOORBELL_RECEIVE_EVERY_MS} (5 minutes), not ${String(every)}`);
    }
  }

  /** Messages received and not yet finished (queued or running). */
  get inFlight(): number {
    return this.held;
  }

  /**
   * Checks the group (a missing group rejects here) and starts polling.
   * Resolves once the poll loop runs.
   */
  async start(): Promise<void> {
    if (this.state !== 'idle') throw new Error(`The consumer is ${this.state}; create a new one.`);
    this.state = 'running';
    try {
      const group = await this.client.getGroup(this.group, { signal: this.stopSignal.signal });
      this.visibilitySeconds = this.options.visibilityTimeoutSeconds ?? group.visibilityTimeoutSeconds;
      if (group.retryPolicy) this.retryPolicy = group.retryPolicy;
      if (group.maxDeliveries) this.maxDeliveries = group.maxDeliveries;
      await this.readShardScopes(group.subscriptions?.map((s) => s.topic) ?? []);
    } catch (error) {
      this.state = 'stopped';
      throw error;
    }
    this.loop = this.poll();
  }

  /**
   * Stops polling, waits for running handlers (and their commits) and releases
   * the messages that were still queued, each lane after its running message.
   */
  async stop(options: { abort?: boolean } = {}): Promise<void> {
    if (this.state === 'idle') {
      this.state = 'stopped';
      return;
    }
    if (this.state === 'running') this.state = 'stopping';
    if (options.abort) this.stopSignal.abort(new Error('consumer stopping'));
    this.wake?.();
    this.pause.abort();
    // Release only once no receive is pending: a release would wake a pending long poll, which would lease the message again.
    await this.loop;
    this.polling = false;
    for (const lane of this.lanes.values()) if (!lane.running) this.drain(lane);
    while (this.settled.size > 0) await Promise.all([...this.settled]);
    this.state = 'stopped';
  }

  private report(error: unknown, kind: ConsumerErrorKind, message?: Delivered) {
    if (this.options.onError) this.options.onError(error, kind, message);
    else console.error(`sluice consumer ${this.group}: ${kind} failed${message ? ` for ${message.messageId}` : ''}:`, error);
  }

  private async poll() {
    let failures = 0;
    while (this.state === 'running') {
      const room = Math.min(100, this.maxBuffered - this.held);
      if (room <= 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      if (this.parkAgainAt !== undefined && Date.now() >= this.parkAgainAt) {
        this.parkAgainAt = undefined;
        this.park = true;
      }
      let messages: Delivered[];
      const carried = this.carry.splice(0);
      const input = {
        maxMessages: room,
        // Carried commits hold their lanes until answered: no long poll then.
        waitSeconds: carried.length > 0 ? 0 : (this.options.waitSeconds ?? 10),
        visibilityTimeoutSeconds: this.visibilitySeconds,
        ...(this.options.topics ? { topics: this.options.topics } : {}),
        ...(this.park ? { park: true } : {}),
        ...(this.park && this.doorbellMissing ? { doorbellMissing: true } : {}),
      };
      let doorbell: { queueUrl: string } | undefined;
      this.claimable.received(Date.now());
      // Asked once per answer: a receive the server refused (one without `doorbellMissing` answers 400)
      // must not carry it for ever, and a doorbell still missing falls back to HTTP for the period. A
      // receive that never got an answer (network, 5xx, 429) asks again with the next.
      const askedBefore = this.doorbellRepairAskedAt;
      if (input.doorbellMissing) {
        this.doorbellMissing = false;
        this.doorbellRepairAskedAt = Date.now();
      }
      try {
        if (carried.length > 0 || this.park) {
          const got = await this.client.receiveAndCommit(
            this.group,
            carried.map((c) => c.message.receiptHandle),
            input,
            { signal: this.stopSignal.signal },
          );
          carried.forEach((c, i) => this.committed(c.message, got.commitResults[i], '/receive'));
          carried.forEach((c) => c.settle());
          messages = got.messages;
          doorbell = got.doorbell;
        } else messages = await this.client.receive(this.group, input, { signal: this.stopSignal.signal });
        failures = 0;
      } catch (error) {
        // The receive may or may not have written them: commit them on their own (idempotent).
        if (carried.length > 0) this.track(this.commitCarried(carried));
        if (this.state !== 'running') break;
        if (input.doorbellMissing && !(error instanceof SluiceApiError && error.status >= 400 && error.status < 500 && error.status !== 429)) {
          this.doorbellMissing = true;
          this.doorbellRepairAskedAt = askedBefore;
        }
        this.report(error, 'receive');
        failures++;
        await sleep(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random() / 2), this.pause.signal);
        continue;
      }
      for (const message of messages) this.enqueue(message);
      this.pump();
      if (messages.length === 0 && doorbell && this.park) await this.waitOnDoorbell(doorbell.queueUrl);
    }
    // Commits that found no receive left to carry them.
    this.track(this.commitCarried(this.carry.splice(0)));
  }

  /**
   * Long-polls the group's doorbell until it rings, the consumer stops, or the
   * time for a real receive has come. A doorbell that fails is reported and the
   * consumer long-polls over HTTP: for good when it was denied (no grant, no
   * credentials), else (network, throttling, SQS 5xx) until the next period.
   */
  private async waitOnDoorbell(queueUrl: string) {
    const options = typeof this.options.doorbell === 'object' ? this.options.doorbell : {};
    const every = options.receiveEveryMs ?? DOORBELL_RECEIVE_EVERY_MS;
    try {
      if (this.bell?.queueUrl !== queueUrl) {
        const credentials = options.credentials ?? (await this.client.awsCredentials?.());
        if (!credentials) throw new SluiceConfigurationError('No AWS credentials for the doorbell: pass `doorbell.credentials`.');
        this.bell = new SqsDoorbellWaiter(queueUrl, { credentials, region: options.region, fetch: options.fetch });
      }
      const until = Date.now() + every;
      // stop() aborts `pause`: a parked consumer stops at once.
      const signal = AbortSignal.any([this.stopSignal.signal, this.pause.signal]);
      let settling = true;
      while (this.state === 'running') {
        // A message this consumer released or held may become claimable before the next ring: receive then.
        const due = Math.min(until, this.claimable.next() ?? until);
        const left = due - Date.now();
        if (left <= 0) return;
        const cut = (this.cutDoorbell = new AbortController());
        try {
          if (await this.bell.wait(AbortSignal.any([signal, cut.signal]), Math.min(DOORBELL_WAIT_SECONDS, Math.ceil(left / 1000)))) return;
        } catch (error) {
          // A queue created again answers nothing for its first second (SQS API Reference, CreateQueue),
          // and another container may have answered this doorbell sooner: once, a second later, again.
          const justAsked = Date.now() - this.doorbellRepairAskedAt < DOORBELL_SETTLE_MS;
          if (!(settling && justAsked && error instanceof SqsDoorbellError && error.missing)) throw error;
          settling = false;
          await sleep(1000, signal);
        }
      }
    } catch (error) {
      if (this.state !== 'running') return;
      this.report(error, 'doorbell');
      // Gone (SQS deletes queues idle for 30 days): the next receive parks at once and asks for it to
      // be created again — once per period; missing again that soon, it is a failure as below.
      if (error instanceof SqsDoorbellError && error.missing && Date.now() - this.doorbellRepairAskedAt >= every) {
        this.doorbellMissing = true;
        return;
      }
      this.park = false;
      const denied = error instanceof SluiceConfigurationError || (error instanceof SqsDoorbellError && error.denied);
      if (!denied) this.parkAgainAt = Date.now() + every;
    }
  }

  /** Commits carried messages on their own, in one request, and lets their lanes go on. */
  private async commitCarried(carried: Carried[]) {
    if (carried.length === 0) return;
    try {
      const { results } = await this.client.commit(
        this.group,
        carried.map((c) => c.message.receiptHandle),
      );
      carried.forEach((c, i) => this.committed(c.message, results[i], '/commit'));
    } catch (error) {
      for (const c of carried) {
        this.claimable.expire(c.message.receiptHandle);
        this.report(error, 'commit', c.message);
      }
    } finally {
      carried.forEach((c) => c.settle());
    }
  }

  /** Reports one commit's result: an error to `onError`, success to `onCommitted`. */
  private committed(message: Delivered, result: CommitEntryResult | undefined, path: '/commit' | '/receive') {
    if (result && !('error' in result)) this.claimable.drop(message.receiptHandle);
    else this.claimable.expire(message.receiptHandle);
    if (result && 'error' in result) {
      this.report(new SluiceApiError(result.error, { method: 'POST', url: `/v1/groups/${this.group}${path}` }), 'commit', message);
    } else if (result) this.options.onCommitted?.(message, result);
  }

  /**
   * Learns which subscribed topics share shard sequences (a time-order group): a shard key is a
   * lane per topic otherwise, so a failing handler on one topic never releases, unhandled, another
   * topic's message that happens to carry the same shard key. A topic that cannot be read (the
   * call denied, the client without getTopic) keeps the shared lane, reported to onError.
   */
  private async readShardScopes(topics: readonly string[]): Promise<void> {
    await Promise.all(
      topics.map(async (name) => {
        let scope = UNKNOWN_SHARD_SCOPE;
        try {
          const topic = await this.client.getTopic?.(name, { signal: this.stopSignal.signal });
          if (topic) scope = topic.orderGroup ? `o:${topic.orderGroup}` : `t:${name}`;
        } catch (error) {
          this.report(error, 'topic');
        }
        this.shardScopes.set(name, scope);
      }),
    );
  }

  private enqueue(message: Delivered) {
    const ordered = message.shardKey !== null && this.options.preserveShardOrder !== false;
    const scope = this.shardScopes.get(message.topic) ?? UNKNOWN_SHARD_SCOPE;
    const key = ordered ? `k:${scope}\u0000${message.shardKey}` : `m:${message.topic}/${message.messageId}`;
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { key, queue: [], running: false }));
    const held: Held = { message, abort: new AbortController(), timer: undefined, lost: false };
    // Keep the lane in sequence order (a redelivered older message goes before newer ones).
    const seq = message.sequence ?? Number.POSITIVE_INFINITY;
    let at = lane.queue.length;
    while (at > 0 && (lane.queue[at - 1]!.message.sequence ?? Number.POSITIVE_INFINITY) > seq) at--;
    lane.queue.splice(at, 0, held);
    this.held++;
    this.claimable.lease(message.receiptHandle, Date.now() + this.visibilitySeconds * 1000);
    this.armExtension(held);
    // The consumer may have started stopping while this receive was answered: give these back when the poll has ended.
  }

  private armExtension(held: Held) {
    if (this.options.extendLeases === false) return;
    const every = Math.max(500, (this.visibilitySeconds * 1000) / 2);
    held.timer = setTimeout(() => {
      this.track(
        this.changeVisibility(held.message, this.visibilitySeconds).then(
          () => {
            if (held.timer !== undefined) this.armExtension(held);
          },
          (error: unknown) => {
            if (error instanceof SluiceApiError && error.status === 409) {
              held.lost = true;
              held.abort.abort(error);
            } else if (held.timer !== undefined) this.armExtension(held);
            this.report(error, 'extend', held.message);
          },
        ),
      );
    }, every);
  }

  private disarm(held: Held) {
    clearTimeout(held.timer);
    held.timer = undefined;
  }

  /** Starts the head of every idle lane while there is room, in the order the lanes appeared. */
  private pump() {
    for (const lane of this.lanes.values()) {
      if (this.running >= this.concurrency || this.state !== 'running') break;
      if (!lane.running && lane.queue.length > 0) this.startLane(lane);
    }
  }

  private startLane(lane: Lane) {
    lane.running = true;
    this.running++;
    this.track(
      this.runLane(lane).finally(() => {
        lane.running = false;
        this.running--;
        if (lane.queue.length === 0) this.lanes.delete(lane.key);
        if (this.state === 'running') this.pump();
        else if (!this.polling) this.drain(lane);
        this.wake?.();
      }),
    );
  }

  /** Runs the lane's head message: handler, then commit (or release on error). */
  private async runLane(lane: Lane) {
    const held = lane.queue.shift();
    if (!held) return;
    const { message } = held;
    let result: HandlerResult | void;
    try {
      result = await this.options.handler(message, {
        group: this.group,
        // Its own lease lost, or the consumer stopping hard (stop({ abort: true })).
        signal: AbortSignal.any([held.abort.signal, this.stopSignal.signal]),
        extendVisibility: (seconds) => this.changeVisibility(message, seconds),
      });
    } catch (error) {
      this.report(error, 'handler', message);
      // A failed attempt: the release lets the server apply the group's retry back-off (SPEC §1;
      // the consumer does not wait itself). The head goes back first, so on a FIFO topic the
      // server holds what waited behind it until the head is delivered again: the shard stays in order.
      const behind = lane.queue.splice(0);
      await this.releaseAll([held]);
      // Never handled: given back without counting a failed attempt, so a poison message does not
      // take the messages queued behind it to the dead-letter topic with it.
      await this.releaseAll(behind, true);
      return;
    }
    this.disarm(held);
    const publish = result?.publish ?? [];
    if (publish.length === 0 && this.options.carryCommits !== false && this.wake) {
      // The poll loop waits for room, which this message frees: its receive carries the commit.
      // The lane waits for the commit's answer, so a shard's next message runs only after it.
      this.held--;
      await new Promise<void>((settle) => {
        this.carry.push({ message, settle });
        this.wake?.();
      });
      return;
    }
    try {
      const entry = publish.length > 0 ? { receiptHandle: message.receiptHandle, publish } : message.receiptHandle;
      const committed = await this.client.commit(this.group, [entry]);
      this.committed(message, committed.results[0], '/commit');
    } catch (error) {
      this.claimable.expire(message.receiptHandle);
      this.report(error, 'commit', message);
    } finally {
      this.held--;
    }
  }

  /** Gives a stopping lane's queued messages back unhandled (not failed attempts: no back-off, not counted). */
  private drain(lane: Lane) {
    const queued = lane.queue.splice(0);
    if (queued.length > 0) this.track(this.releaseAll(queued, true));
    if (!lane.running) this.lanes.delete(lane.key);
  }

  private async releaseAll(items: Held[], untried = false) {
    for (const held of items) {
      this.disarm(held);
      if (!held.lost) {
        try {
          if (untried && this.client.giveBack) {
            await this.client.giveBack(this.group, held.message.receiptHandle);
            this.claimable.drop(held.message.receiptHandle);
            this.claimable.add(Date.now());
          } else await this.changeVisibility(held.message, 0);
        } catch (error) {
          this.claimable.expire(held.message.receiptHandle);
          this.report(error, 'release', held.message);
        }
      }
      this.held--;
    }
  }

  /**
   * Changes a held message's visibility and notes when it becomes claimable again:
   * its new lease end, or for a release (0) the end of the group's retry back-off.
   */
  private async changeVisibility(message: Delivered, seconds: number) {
    await this.client.changeVisibility(this.group, message.receiptHandle, seconds);
    const now = Date.now();
    if (seconds > 0) {
      this.claimable.lease(message.receiptHandle, now + seconds * 1000);
      return;
    }
    this.claimable.drop(message.receiptHandle);
    const backoff = retryBackoffMs(this.retryPolicy, message.deliveryCount, this.maxDeliveries);
    if (backoff !== undefined) this.claimable.add(now + backoff);
  }

  private track(work: Promise<void>) {
    const tracked = work.catch((error: unknown) => this.report(error, 'handler'));
    this.settled.add(tracked);
    void tracked.finally(() => this.settled.delete(tracked));
  }
}
