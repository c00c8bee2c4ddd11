/**
 * The push worker (SPEC §3.9, docs/design.md "Push groups"): for each push
 * job it drains the group — claim with the normal claim path, POST signed
 * batches to the group's target, commit what the answer accepts, fail the
 * attempt of the rest — until nothing is claimable.
 *
 *   job {group} ─▶ claim ≤ free slots × batchSize (lease = timeout + margin)
 *     ─▶ requests: standard topics in batches; FIFO: consecutive messages of
 *        one shard, that shard's requests one after another
 *     ─▶ ≤ maxConcurrency requests in flight (per group, per worker process)
 *     ─▶ 2xx: commit all but `retry` (FIFO: a listed message and the later
 *        ones of its shard in that request); otherwise: all failed
 *     ─▶ failed: release the lease (expiry = now + retry back-off), and a
 *        push job delayed to that time (the timer; never polling)
 *     ─▶ claim again … nothing claimable: done. Last attempts: one write per round.
 *
 * A slow endpoint holds only its own group: each job drains one group and
 * groups run side by side. Messages that used up `maxDeliveries` are
 * dead-lettered by the claim that would deliver them again.
 */
import { InvalidArgumentError } from '../domain/errors.js';
import { iso, type DeliveredMessage, type Group, type Topic } from '../domain/model.js';
import { PushLimits, type PushSettings } from '../domain/push.js';
import { retryDelayMs } from '../domain/retry-policy.js';
import { namespaceOf, partitionOf, streamNamespace } from '../domain/streams.js';
import { namedInOneLook, NAMED_PER_LOOK, samplesStreams } from './partition-sampler.js';
import { pushSecretContext } from '../adapters/aws/names.js';
import type { PushAttempt } from '../adapters/dynamodb/push-state.js';
import type { Clock } from '../ports/clock.js';
import type { LambdaInvoker } from '../ports/lambda-invoker.js';
import type { PushJob, PushQueue } from '../ports/push-queue.js';
import type { Random } from '../ports/random.js';
import type { SecretBox, WebhookClient, WebhookResponse } from '../ports/webhooks.js';
import type { QueueService } from './queue-service.js';
import type { Stores } from './stores.js';
import { openSigningSecrets, signedHeaders } from './webhook-signing.js';


export interface PusherOptions {
  /** AWS only: invokes `lambdaArn` targets (without it they fail, as on the local runtime). */
  lambda?: LambdaInvoker | undefined;
  /** A job stops claiming after this long (ms) and hands the rest to a new job (the Lambda's own timeout is longer). */
  maxRunMs?: number;
  log?: (message: string, details: Record<string, unknown>) => void;
  /**
   * Called once at the end of a drain that had failed requests (no answer, or not a 2xx),
   * with how many: never per message, never for a drain without failures (on AWS the worker
   * turns it into the group's `PushFailures` metric; docs/design.md, Push groups).
   */
  failures?: (group: string, figures: { failedRequests: number; requests: number }) => void;
}

/** A lease outlives the request's timeout by this much (commit after the answer, clock skew). */
const LEASE_MARGIN_MS = 10_000;
const DEFAULT_MAX_RUN_MS = 60_000;
/** Expiries within this long of a retry job's first share that job (which waits for the last of them). */
const RETRY_JOB_SPAN_MS = 100;
/** Streams a drain's retry jobs name at most (4 claims' worth of named streams). */
const RETRY_STREAMS_MAX = 4 * NAMED_PER_LOOK;
const USER_AGENT = 'Sluice-Push/1';

/** How long a push claim leases its messages: the request's timeout plus {@link LEASE_MARGIN_MS}. */
export const pushLeaseMs = (push: Pick<PushSettings, 'timeoutSeconds'>): number => push.timeoutSeconds * 1000 + LEASE_MARGIN_MS;

/** One request's messages and where their order lives (a FIFO shard) or not (standard). */
interface Lane {
  fifo: boolean;
  messages: DeliveredMessage[];
  /** Until when (ms) this drain holds the lane's leases at least. */
  leasedUntil?: number;
}

/** A counting semaphore: maxConcurrency per group, shared by the jobs of one process. */
class Slots {
  private used = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(public limit: number) {}
  get free(): number {
    return Math.max(0, this.limit - this.used);
  }
  async take(): Promise<void> {
    if (this.used < this.limit) {
      this.used++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  give(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.used--;
  }
}

export class Pusher {
  private readonly slots = new Map<string, Slots>();
  private readonly maxRunMs: number;

  constructor(
    private readonly stores: Stores,
    private readonly queue: Pick<QueueService, 'claimForPush' | 'commit' | 'changeVisibility'>,
    private readonly webhooks: Pick<WebhookClient, 'post'>,
    private readonly secrets: SecretBox,
    private readonly pushQueue: PushQueue,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly options: PusherOptions = {},
  ) {
    this.maxRunMs = options.maxRunMs ?? DEFAULT_MAX_RUN_MS;
  }

  /** Runs one batch of jobs: each group once (jobs of one group collapse), groups side by side. */
  async run(jobs: readonly PushJob[]): Promise<void> {
    const now = this.clock.now();
    const early = jobs.filter((j) => (j.notBefore ?? 0) > now);
    // A back-off longer than the queue's longest delay: send it on until its time.
    for (const job of early) await this.pushQueue.send([job], (job.notBefore ?? now) - now);
    // Per group, the streams its jobs heard news on: a topic of more than 8 partitions or notice streams
    // is sampled, and a claim must read them (a drain ends at its first empty claim).
    const groups = new Map<string, Set<string>>();
    for (const job of jobs.filter((j) => (j.notBefore ?? 0) <= now)) {
      const heard = groups.get(job.group) ?? new Set<string>();
      if (job.stream !== undefined) heard.add(job.stream);
      groups.set(job.group, heard);
    }
    await Promise.all([...groups].map(([group, heard]) => this.drain(group, [...heard])));
  }

  /** Pushes a group's claimable messages until none is left (or the run's time is up: a new job takes over). */
  async drain(groupName: string, heard: readonly string[] = []): Promise<void> {
    const group = await this.stores.catalog.group(groupName);
    if (!group?.push || !group.pushSecret) return;
    const push = group.push;
    const slots = this.slotsOf(group);
    const started = this.clock.now();
    const attempts: PushAttempt[] = [];
    const topics = await this.stores.catalog.topics(group.subscriptions.map((s) => s.topic));
    const secrets = await openSigningSecrets(this.secrets, group.pushSecret, pushSecretContext(group.name), started);
    const leaseMs = pushLeaseMs(push);
    /** When messages this drain failed are claimable again: each gets a job at or after its time. */
    const retryTimes: number[] = [];
    /** Messages this drain gave back to be pushed again (their streams lead the retry jobs' claims). */
    const retried: DeliveredMessage[] = [];
    /** What the last claim leased (undefined while a claim is under way: it may have leased without answering). */
    let inHand: DeliveredMessage[] | undefined = [];
    let pending = [...heard];
    try {
      for (;;) {
        if (this.clock.now() - started >= this.maxRunMs) {
          // The streams the jobs heard lead the next drain's claims too (a wide topic is sampled).
          const named = await this.retryStreams(topics, heard, []);
          await this.pushQueue.send(named.length > 0 ? named.map((stream) => ({ group: group.name, stream })) : [{ group: group.name }]);
          break;
        }
        const free = Math.max(1, slots.free);
        inHand = undefined;
        // A sequenced shard held below a hole (its writer may still fill it) gets a job for when it is
        // filled: nothing is appended then, and a drain that ends now would not come back.
        // The leases end no sooner than this (the claim adds the retry policy's back-off on top).
        const leasedUntil = this.clock.now() + leaseMs;
        // The sampler names at most 4 streams of a topic a look: the rest of what the jobs heard go to later claims.
        const naming = namedInOneLook(pending);
        pending = pending.filter((s) => !naming.includes(s));
        const claimed = await this.queue.claimForPush(group, free * push.batchSize, leaseMs, leasedUntil, (_topic, until) => retryTimes.push(until), naming);
        inHand = claimed;
        if (claimed.length === 0 && pending.length === 0) break;
        const lanes = this.lanesOf(claimed, topics, push.batchSize);
        const results = await Promise.all(lanes.map((lane) => this.pushLane(group, push, { ...lane, leasedUntil }, leaseMs, slots, secrets)));
        for (const result of results) {
          attempts.push(...result.attempts);
          retryTimes.push(...result.retryTimes);
          retried.push(...result.retried);
        }
      }
    } catch (error) {
      // A claim, commit or release failed: what this drain leased is claimable again when its
      // leases end, and a job then drains it (on AWS the failed job also comes back after the
      // push queue's visibility timeout; the local bus redelivers it the same way). Messages the
      // earlier claims of this drain released keep their own jobs.
      await this.sendRetryJobs(group.name, [...retryTimes, ...this.leaseEnds(group, inHand, leaseMs)], await this.retryStreams(topics, heard, [...retried, ...(inHand ?? [])]));
      throw error;
    } finally {
      if (attempts.length > 0) await this.recordAttempts(group.name, attempts);
    }
    await this.sendRetryJobs(group.name, retryTimes, await this.retryStreams(topics, heard, retried));
    const failedRequests = attempts.filter((a) => a.status === null || a.status < 200 || a.status >= 300).length;
    if (failedRequests > 0) this.options.failures?.(group.name, { failedRequests, requests: attempts.length });
  }

  private slotsOf(group: Group): Slots {
    const limit = group.push?.maxConcurrency ?? PushLimits.maxConcurrencyDefault;
    let slots = this.slots.get(group.name);
    if (!slots) this.slots.set(group.name, (slots = new Slots(limit)));
    slots.limit = limit;
    return slots;
  }

  /**
   * Splits a claim into lanes: a FIFO shard's messages (in claim order,
   * which is the shard's order) form one lane whose requests go one after
   * another; standard messages form lanes of one request each.
   */
  private lanesOf(messages: DeliveredMessage[], topics: Map<string, Topic>, batchSize: number): Lane[] {
    const shards = new Map<string, DeliveredMessage[]>();
    const standard: DeliveredMessage[] = [];
    for (const message of messages) {
      const topic = topics.get(message.topic);
      if (topic?.type === 'fifo' && message.shardKey !== null) {
        const key = `${streamNamespace(topic)}\u0000${message.shardKey}`;
        shards.set(key, [...(shards.get(key) ?? []), message]);
      } else standard.push(message);
    }
    const lanes: Lane[] = [...shards.values()].map((m) => ({ fifo: true, messages: m }));
    for (let i = 0; i < standard.length; i += batchSize) lanes.push({ fifo: false, messages: standard.slice(i, i + batchSize) });
    return lanes;
  }

  /** Sends one lane's requests in order; after a FIFO request fails, the rest of its shard is released unsent. */
  private async pushLane(group: Group, push: PushSettings, lane: Lane, leaseMs: number, slots: Slots, secrets: string[]) {
    const attempts: PushAttempt[] = [];
    const retryTimes: number[] = [];
    const retried: DeliveredMessage[] = [];
    for (let i = 0; i < lane.messages.length; i += push.batchSize) {
      let batch = lane.messages.slice(i, i + push.batchSize);
      await slots.take();
      let outcome: { attempt: PushAttempt; retry: Set<string> };
      try {
        // A request that waited for a slot (more lanes than slots) or behind the lane's earlier requests
        // could outlast its leases: another drain would meanwhile push the messages again — on a FIFO
        // shard, after later ones. Its leases are extended first; one that is gone ends the FIFO lane here.
        const held = await this.holdLeases(group, push, lane, batch, leaseMs);
        if (held.length < batch.length) {
          // Not held: claimable again when its lease ends (taken by another drain, or a failed write), with a job then.
          retryTimes.push(...this.leaseEnds(group, batch.filter((m) => !held.includes(m)), leaseMs));
          retried.push(...batch.filter((m) => !held.includes(m)));
          if (lane.fifo) {
            // The shard waits for the first message not held: what this drain still holds of it goes back unsent.
            const rest = [...held, ...lane.messages.slice(i + push.batchSize)];
            if (rest.length > 0) retryTimes.push(...(await this.fail(group, rest, leaseMs, true)));
            retried.push(...rest);
            break;
          }
          if (held.length === 0) continue;
          batch = held;
        }
        outcome = await this.request(group.name, push, batch, secrets, lane.fifo);
      } finally {
        slots.give();
      }
      attempts.push(outcome.attempt);
      const committed = batch.filter((m) => !outcome.retry.has(m.messageId));
      const failed = batch.filter((m) => outcome.retry.has(m.messageId));
      if (committed.length > 0) await this.queue.commit(group.name, committed.map((m) => m.receiptHandle));
      if (failed.length > 0) {
        // FIFO: the shard waits with its failed message (order first): the rest of the lane goes back unsent.
        retryTimes.push(...(await this.fail(group, failed, leaseMs)));
        retried.push(...failed);
        if (lane.fifo) {
          // Never sent: given back without counting a failed attempt (SPEC §3.9 counts the request's messages only).
          const unsent = lane.messages.slice(i + push.batchSize);
          retryTimes.push(...(await this.fail(group, unsent, leaseMs, true)));
          retried.push(...unsent);
        }
        if (lane.fifo) break;
      }
    }
    return { attempts, retryTimes, retried };
  }

  /**
   * The messages of `batch` whose leases outlast a request sent now (its timeout plus the margin):
   * all of them while the claim's lease does; else each lease is extended by `leaseMs` first, in
   * order, and on a FIFO lane the first one that is gone (the lease ended and another drain claimed
   * the message, or the write failed) ends the list — later messages of the shard must wait for it.
   * Each message is in one request only, so each request is checked against the claim's lease end.
   */
  private async holdLeases(group: Group, push: PushSettings, lane: Lane, batch: DeliveredMessage[], leaseMs: number): Promise<DeliveredMessage[]> {
    const now = this.clock.now();
    if (lane.leasedUntil === undefined || now + push.timeoutSeconds * 1000 + LEASE_MARGIN_MS / 2 <= lane.leasedUntil) return batch;
    const held: DeliveredMessage[] = [];
    for (const message of batch) {
      try {
        await this.queue.changeVisibility(group.name, message.receiptHandle, Math.ceil(leaseMs / 1000));
        held.push(message);
      } catch (error) {
        this.options.log?.('push lease ended before its request: not sent', { group: group.name, messageId: message.messageId, error: String(error) });
        if (lane.fifo) break;
      }
    }
    return held;
  }

  /**
   * One signed request; resolves to the messages to retry (all of them for
   * anything but a 2xx; for a 2xx the `retry` list, extended on FIFO lanes
   * to the later messages of that request).
   */
  private async request(groupName: string, push: PushSettings, batch: DeliveredMessage[], secrets: string[], fifo: boolean) {
    const at = this.clock.now();
    const payload = JSON.stringify({
      type: 'messages',
      timestamp: iso(at),
      data: { group: groupName, messages: batch.map(({ receiptHandle: _handle, ...message }) => message) },
    });
    const headers = signedHeaders(secrets, `psh_${this.random.id()}`, at, payload, USER_AGENT);
    const timeoutMs = push.timeoutSeconds * 1000;
    const all = new Set(batch.map((m) => m.messageId));
    const started = Date.now();
    let response: WebhookResponse;
    try {
      if (push.target.url !== undefined) response = await this.webhooks.post(push.target.url, headers, payload, timeoutMs);
      else if (this.options.lambda) response = await this.options.lambda.invoke(push.target.lambdaArn, payload, timeoutMs);
      else throw new InvalidArgumentError('Lambda push targets are invoked only on AWS');
    } catch (error) {
      const reason =
        error instanceof Error ? (error.name === 'TimeoutError' || error.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : error.message || error.name) : 'call failed';
      this.options.log?.('push request failed', { group: groupName, reason });
      return { attempt: this.attempt(at, null, started, reason, batch.length, batch.length), retry: all };
    }
    if (response.status < 200 || response.status >= 300) {
      return { attempt: this.attempt(at, response.status, started, `answered HTTP ${response.status}`, batch.length, batch.length), retry: all };
    }
    if (response.truncated) {
      // Its `retry` list may be in the part not read: committing the batch could drop what it lists.
      return { attempt: this.attempt(at, response.status, started, 'answer too long to read its retry list: all retried', batch.length, batch.length), retry: all };
    }
    const listed = retryList(response.body);
    const retry = new Set<string>();
    batch.forEach((m, index) => {
      if (listed.has(m.messageId) || (fifo && batch.slice(0, index).some((earlier) => listed.has(earlier.messageId)))) retry.add(m.messageId);
    });
    const error = retry.size > 0 ? `answer asked to retry ${retry.size} of ${batch.length}` : null;
    return { attempt: this.attempt(at, response.status, started, error, batch.length, retry.size), retry };
  }

  private attempt(at: number, status: number | null, startedMs: number, error: string | null, messages: number, retried: number): PushAttempt {
    return { at, status, latencyMs: Math.max(0, Date.now() - startedMs), error, messages, retried };
  }

  /**
   * Fails the attempt of `messages`: each lease is released, which sets its
   * expiry to the retry policy's back-off (the claim dead-letters a message
   * whose deliveries are used up). Resolves to when each of them is claimable
   * again: the expiry each release wrote (not a time computed here, which
   * would be earlier by the release's own round trip), or, where the release
   * failed, when its lease ends anyway.
   */
  private async fail(group: Group, messages: DeliveredMessage[], leaseMs: number, untried = false): Promise<number[]> {
    const times: number[] = [];
    for (const message of messages) {
      try {
        times.push(await this.queue.changeVisibility(group.name, message.receiptHandle, 0, untried));
      } catch (error) {
        // The lease ended meanwhile (seek, delete, or it expired and was claimed again), or the
        // release itself failed: either way the message is claimable once its lease ends.
        this.options.log?.('push lease release failed', { group: group.name, messageId: message.messageId, error: String(error) });
        times.push(...this.leaseEnds(group, [message], leaseMs));
      }
    }
    return times;
  }

  /**
   * When leases a claim took end at the latest: a claim leases for `leaseMs`
   * plus the back-off its failure would earn (domain/claims.ts), so a lease
   * that ends without an answer keeps the retry policy's spacing. Unknown
   * messages (a claim that failed may still have leased): the longest back-off.
   */
  private leaseEnds(group: Group, claimed: readonly DeliveredMessage[] | undefined, leaseMs: number): number[] {
    const now = this.clock.now();
    if (claimed === undefined) return [now + leaseMs + group.retryPolicy.maxSeconds * 1000];
    return claimed.map((m) => now + leaseMs + retryDelayMs(group.retryPolicy, m.deliveryCount, group.maxDeliveries));
  }

  /**
   * The streams a drain's retry jobs name: the ones its jobs heard, then the partitions of the
   * messages it gave back (their receipt handles say), at most {@link RETRY_STREAMS_MAX}. A claim on
   * a topic of more than 8 partitions samples 8 of them, and a drain ends at its first empty claim:
   * unnamed, a released message would wait for some later job to sample its partition. (A FIFO
   * shard's release is on the ready index, which every push claim reads whole.)
   */
  private async retryStreams(topics: ReadonlyMap<string, Topic>, heard: readonly string[], retried: readonly DeliveredMessage[]): Promise<string[]> {
    // Only topics whose claims sample (more than 8 partitions or notice streams): on the others every
    // claim reads every stream, and one job without a stream does (a job per stream would cost more).
    const sampled = new Set([...topics.values()].filter(samplesStreams).map((t) => streamNamespace(t)));
    const streams = new Set(heard.filter((stream) => sampled.has(namespaceOf(stream))));
    const wide = retried.filter((m) => { const t = topics.get(m.topic); return t !== undefined && t.type === 'standard' && sampled.has(streamNamespace(t)); });
    if (wide.length > 0) {
      const codec = await this.stores.ids.codec();
      for (const message of wide) {
        try {
          const { topic, stream } = codec.openReceipt(message.receiptHandle);
          if (partitionOf(stream, topic) !== undefined) streams.add(stream);
        } catch {
          // Not a handle of this deployment: nothing to name.
        }
      }
    }
    return [...streams].slice(0, RETRY_STREAMS_MAX);
  }

  /**
   * Jobs for messages claimable again at `times`: each job runs after the
   * latest of the times it covers (a drain that starts before a message's
   * expiry does not see it, and would end without it); times within
   * {@link RETRY_JOB_SPAN_MS} of a job's first share it (a job per message
   * would cost a request per message). `notBefore` is checked and the lease
   * compared on the same worker's clock, so clocks of workers never race.
   */
  private async sendRetryJobs(group: string, times: readonly number[], heard: readonly string[] = []): Promise<void> {
    const sorted = [...times].sort((a, b) => a - b);
    const jobs: number[] = [];
    let first: number | undefined;
    for (const t of sorted) {
      if (first === undefined || t > first + RETRY_JOB_SPAN_MS) {
        first = t;
        jobs.push(t);
      } else jobs[jobs.length - 1] = t;
    }
    // A lease is claimable from its expiry on (`expiresAt <= now`, domain/cursor.ts).
    // A retry job names the streams the drain heard: on a wide topic its claims must read them (a drain ends at its first empty claim).
    for (const at of jobs) await this.pushQueue.send(heard.length > 0 ? heard.map((stream) => ({ group, notBefore: at, stream })) : [{ group, notBefore: at }], at - this.clock.now());
  }

  private async recordAttempts(group: string, attempts: PushAttempt[]): Promise<void> {
    try {
      await this.stores.pushState.record(group, attempts);
    } catch (error) {
      // A diagnostic: losing it never loses a message.
      this.options.log?.('push attempts not recorded', { group, error: String(error) });
    }
  }
}

/** The `retry` list of a 2xx answer (anything else — no JSON, no list — retries nothing). */
function retryList(body: string): Set<string> {
  try {
    const parsed = JSON.parse(body) as { retry?: unknown };
    return new Set(Array.isArray(parsed.retry) ? parsed.retry.filter((id): id is string => typeof id === 'string') : []);
  } catch {
    return new Set();
  }
}
