/**
 * Topics, consumer groups and their statistics.
 */
import type { DoorbellQueues } from '../ports/doorbell.js';
import { AnswerBudget, jsonBytes } from '../domain/answer-budget.js';
import {
  ConflictError,
  GroupNotFoundError,
  GroupRecentlyDeletedError,
  InvalidArgumentError,
  TooManyDeadLetterGroupsError,
  TooManyPushGroupsError,
  TopicNotFoundError,
  TopicRecentlyDeletedError,
} from '../domain/errors.js';
import { Limits, countedFrom, iso, type DeliveryMode, type Group, type Subscription, type Topic, type TopicType } from '../domain/model.js';
import { noticeStreamsOf, streamId, streamNamespace } from '../domain/streams.js';
import { resolveRetryPolicy, type RetryPolicy } from '../domain/retry-policy.js';
import type { Clock } from '../ports/clock.js';
import type { SecretBox, WebhookClient } from '../ports/webhooks.js';
import { checkerUrlProblem, type CheckerPolicy } from '../domain/ssrf.js';
import { PushLimits, pushCountChanges, pushView, resolvePush, type PushInput, type PushSettings } from '../domain/push.js';
import { pushSecretContext } from '../adapters/aws/names.js';
import { newSigningSecret } from './webhook-signing.js';
import { StreamLog } from '../adapters/dynamodb/stream-log.js';
import { ensureDeadLetterTopic } from './lookups.js';
import { PartitionRaiser, checkPartitionChange, partitionsOfNewTopic } from './partition-raiser.js';
import { PARTITION_CALLS_IN_FLIGHT, mapBounded } from './bounded-parallel.js';
import { GroupFigures, type GroupFigureValues } from './group-figures.js';
import type { Stores } from './stores.js';

/** Page tokens are at most this long (the API refuses longer ones). */
const PAGE_TOKEN_MAX_BYTES = 2048;
/** The answer budget of a listing `{"<field>":[…],"nextToken":…}`: items beyond it go to the next page. */
const pageBudget = (field: string) =>
  new AnswerBudget(Limits.answerMaxBytes, jsonBytes({ [field]: [], nextToken: 'x'.repeat(PAGE_TOKEN_MAX_BYTES) }));

export interface TopicInput {
  type: TopicType;
  retentionSeconds: number | undefined;
  maxDelaySeconds: number | undefined;
  orderGroup: string | undefined;
  /** Standard topics: 1–256 (default 4 when created; PUT without it keeps the count); only ever raised. */
  partitions?: number | undefined;
  /**
   * FIFO topics outside a time-order group: shard streams `…/q:<key>` numbered by a counter
   * (docs/design.md, "Sequenced FIFO topics"). Default false; set at creation, fixed after (409).
   */
  sequenced?: boolean | undefined;
}

export interface GroupInput {
  subscriptions: Subscription[];
  deliveryMode: DeliveryMode | undefined;
  visibilityTimeoutSeconds: number | undefined;
  maxDeliveries: number | undefined;
  /** Fields not given take their defaults (PUT) or keep their stored values (PATCH). */
  retryPolicy?: Partial<RetryPolicy> | undefined;
  deadLetterTopic: string | undefined;
  /** Push settings (SPEC §3.9); undefined: none (PUT) or unchanged (PATCH); null (PATCH): back to a pull group. */
  push?: PushInput | null | undefined;
}

/** What push groups need of the deployment (without it, push settings are refused). */
export interface PushAdminOptions {
  /** Seals push groups' signing secrets. */
  secrets: SecretBox;
  /** Resolves push URLs through the SSRF guard. */
  webhooks: Pick<WebhookClient, 'vet'>;
  /** The checker URL rules (SPEC §4), which push URLs follow. */
  policy: CheckerPolicy;
  /**
   * The Lambda functions push groups may target (AWS: the construct's
   * `pushTargets`); undefined on the local runtime, which has no Lambda to invoke.
   */
  lambdaArns?: readonly string[] | undefined;
}

/** What deleting a group needs to delete its doorbell queue (AWS; docs/design.md, "Waking SDK consumers"). */
export interface DoorbellAdminOptions {
  queues: Pick<DoorbellQueues, 'remove'>;
  /** A failed delete leaves a queue that costs nothing while idle: it is logged, the group delete still succeeds. */
  log?: (message: string, details: Record<string, unknown>) => void;
}

/**
 * A purge answers once the clock has moved past its time (messages sent in its
 * very millisecond count as before it); waits of 1 ms, a bound for clocks that
 * do not move by themselves (tests).
 */
const PURGE_CLOCK_WAITS = 20;

/** Reads and conditional writes of one group save before it gives up (409). */
const SAVE_GROUP_ATTEMPTS = 4;

export const topicView = (topic: Topic) => ({
  name: topic.name,
  type: topic.type,
  retentionSeconds: topic.retentionSeconds,
  maxDelaySeconds: topic.maxDelaySeconds,
  orderGroup: topic.orderGroup ?? null,
  partitions: topic.partitions,
  sequenced: topic.sequenced === true,
  createdAt: iso(topic.createdAt),
});

export const groupView = (group: Group) => ({
  name: group.name,
  subscriptions: group.subscriptions.map((s) => ({
    topic: s.topic,
    ...(s.tags === undefined ? {} : { tags: s.tags }),
    ...(s.startFrom === 'earliest' ? { startFrom: s.startFrom } : {}),
  })),
  deliveryMode: group.deliveryMode,
  visibilityTimeoutSeconds: group.visibilityTimeoutSeconds,
  maxDeliveries: group.maxDeliveries,
  retryPolicy: { ...group.retryPolicy },
  deadLetterTopic: group.deadLetterTopic,
  push: group.push ? pushView(group.push) : null,
  createdAt: iso(group.createdAt),
  updatedAt: iso(group.updatedAt),
});

/** The topics a group's push settings deliver from (none for a pull group). */
const pushTopics = (group: Pick<Group, 'push' | 'subscriptions'> | undefined): string[] =>
  group?.push ? group.subscriptions.map((s) => s.topic) : [];

/**
 * Refuses, before anything is written, a save that would add a push group to
 * a topic that has the most it can have (the consistent read of the save);
 * the save's transaction keeps the bound against concurrent saves (`pu < :max`,
 * catalog.ts).
 */
const refuseFullPushTopics = (pushCounts: ReadonlyMap<string, number>, topics: ReadonlyMap<string, Topic>, names: readonly string[]) => {
  for (const [topic, delta] of pushCounts) {
    if (delta <= 0 || (topics.get(topic)?.pushSubscriptions ?? 0) < PushLimits.pushGroupsPerTopicMax) continue;
    const max = PushLimits.pushGroupsPerTopicMax;
    throw new TooManyPushGroupsError(topic, max, [{ path: `subscriptions/${names.indexOf(topic)}/topic`, message: `has ${max} push groups already` }]);
  }
};

/** The push input a group's stored settings amount to (PATCH merges the given fields over it). */
const existingPushInput = (push: PushSettings | undefined): PushInput | null =>
  push ? { ...push.target, batchSize: push.batchSize, timeoutSeconds: push.timeoutSeconds, maxConcurrency: push.maxConcurrency } : null;

/** A PATCH that names a new target replaces the other kind of target. */
const withoutOtherTarget = (patch: PushInput): PushInput =>
  // Both given: kept, so that the merged settings are refused as a PUT's would be.
  patch.url !== undefined && patch.lambdaArn !== undefined
    ? patch
    : patch.url !== undefined
      ? { ...patch, lambdaArn: undefined }
      : patch.lambdaArn !== undefined
        ? { ...patch, url: undefined }
        : patch;

/** Longer than any API request lives (29 s): cursors older than this at a create belong to no create under way. */
const CREATE_RACE_MS = 60_000;

export class AdminService {
  private readonly raiser: PartitionRaiser;
  private readonly figures: GroupFigures;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly push?: PushAdminOptions,
    private readonly doorbells?: DoorbellAdminOptions,
  ) {
    this.raiser = new PartitionRaiser(stores, clock);
    this.figures = new GroupFigures(stores, clock);
  }

  async putTopic(name: string, input: TopicInput) {
    const retentionSeconds = input.retentionSeconds ?? Limits.retentionDefaultSeconds;
    const maxDelaySeconds = input.maxDelaySeconds ?? Math.min(Limits.maxDelayDefaultSeconds, retentionSeconds);
    if (input.orderGroup !== undefined && input.type !== 'fifo') {
      throw new InvalidArgumentError('orderGroup is only allowed on FIFO topics.', {
        issues: [{ path: 'orderGroup', message: 'requires type "fifo"' }],
      });
    }
    const sequenced = input.sequenced === true;
    if (sequenced && input.type !== 'fifo') {
      throw new InvalidArgumentError('sequenced is only allowed on FIFO topics.', {
        issues: [{ path: 'sequenced', message: 'requires type "fifo"' }],
      });
    }
    if (sequenced && input.orderGroup !== undefined) {
      // Every topic of a time-order group writes the group's shard streams: they would all have to agree.
      throw new InvalidArgumentError(
        `sequenced is not allowed on a topic of a time-order group: the topics of '${input.orderGroup}' share its shard streams.`,
        { issues: [{ path: 'sequenced', message: 'not allowed with orderGroup' }] },
      );
    }
    if (maxDelaySeconds > Limits.retentionMaxSeconds) {
      throw new InvalidArgumentError(`maxDelaySeconds may be at most ${Limits.retentionMaxSeconds} (14 days).`, {
        issues: [{ path: 'maxDelaySeconds', message: 'too large' }],
      });
    }
    if (input.type === 'fifo' && (await this.stores.catalog.getTopic(name))?.type !== 'fifo') {
      // A group's dead letters go to partition streams of its dead-letter topic: as a FIFO topic
      // nothing would read them (the group's PUT refuses a FIFO one; this is the other way round).
      // Only a topic becoming FIFO reads every group (admin path, O(groups), as the topic stats do);
      // a PUT of a FIFO topic that exists reads one item. A group save racing this PUT is stopped on
      // the topic item itself (`dg`, catalog.ts putGroupWithTopics and putTopic): this read answers
      // the common case, and groups saved before `dg` existed.
      const holder = (await this.stores.catalog.allGroups()).find((g) => g.deadLetterTopic === name);
      if (holder) throw new ConflictError(`Topic '${name}' is the dead-letter topic of group '${holder.name}': it must stay a standard topic.`);
    }
    const partitions = partitionsOfNewTopic(name, input.type, input.partitions, input.orderGroup);
    // The message-id key exists before any topic does, so functions that only read the table
    // (GET by id) always find it and never need to create it.
    await this.stores.ids.codec();
    // A live topic's partitions change first (a refused change writes nothing), and only when
    // asked: a PUT without `partitions` keeps the count.
    const live = input.partitions === undefined ? undefined : await this.stores.catalog.getTopic(name);
    if (live && live.type === input.type && live.orderGroup === input.orderGroup && (live.sequenced === true) === sequenced) {
      await this.raiser.raise(name, partitions);
    }
    let { topic, created } = await this.stores.catalog.putTopic(
      { name, type: input.type, retentionSeconds, maxDelaySeconds, orderGroup: input.orderGroup, partitions, sequenced },
      this.clock.now(),
      (spec) => this.nextSeqs(spec),
    );
    // Created by someone else between the read and the put: raise it now.
    if (!created && input.partitions !== undefined && topic.partitions !== partitions) topic = await this.raiser.raise(name, partitions);
    return { topic: topicView(topic), created };
  }

  /** The next sequence number of each partition of a standard topic (none for FIFO: shards are unbounded). */
  private async nextSeqs(spec: Pick<Topic, 'name' | 'type' | 'orderGroup' | 'partitions'>): Promise<number[]> {
    if (spec.type !== 'standard') return [];
    const heads = await mapBounded(Array.from({ length: spec.partitions }, (_, p) => p), PARTITION_CALLS_IN_FLIGHT, (p) =>
      this.stores.log.head(streamId(spec, { kind: 'partition', partition: p })),
    );
    return heads.map((head) => StreamLog.nextAfter(head));
  }

  /**
   * Changes only the settings given (PATCH). `type`, `orderGroup` and `sequenced` may be
   * given only with their current values (409 otherwise, as for PUT); what is
   * left out keeps its value. One conditional update of the given fields.
   */
  async patchTopic(name: string, patch: Partial<TopicInput>) {
    const topic = await this.stores.catalog.getTopic(name);
    if (!topic) throw new TopicNotFoundError(name);
    const sequenced = topic.sequenced === true;
    if (
      (patch.type !== undefined && patch.type !== topic.type) ||
      (patch.orderGroup !== undefined && patch.orderGroup !== topic.orderGroup) ||
      (patch.sequenced !== undefined && patch.sequenced !== sequenced)
    ) {
      throw new ConflictError(
        `Topic '${name}' has type '${topic.type}'${topic.orderGroup ? `, orderGroup '${topic.orderGroup}'` : ''} and sequenced ${sequenced}; ` +
          'these never change — delete the topic first to change them.',
      );
    }
    checkPartitionChange(topic, patch.partitions);
    const raised = patch.partitions === undefined ? topic : await this.raiser.raise(name, patch.partitions);
    const changes = { retentionSeconds: patch.retentionSeconds, maxDelaySeconds: patch.maxDelaySeconds };
    if (changes.retentionSeconds === undefined && changes.maxDelaySeconds === undefined) return { topic: topicView(raised) };
    const saved = await this.stores.catalog.patchTopic(name, raised.generation, changes, this.clock.now());
    // The only way the condition fails: the topic was deleted (and perhaps re-created) meanwhile.
    if (!saved) throw new TopicNotFoundError(name);
    return { topic: topicView(saved) };
  }

  async getTopic(name: string) {
    const topic = await this.stores.catalog.getTopic(name);
    if (!topic) throw new TopicNotFoundError(name);
    let approximateMessages: number | null = null;
    if (topic.type === 'standard') {
      const counts = await mapBounded(Array.from({ length: topic.partitions }, (_, p) => p), PARTITION_CALLS_IN_FLIGHT, async (p) => {
        const stream = streamId(topic, { kind: 'partition', partition: p });
        const [head, first] = await Promise.all([this.stores.log.head(stream), this.stores.log.first(stream)]);
        return first ? Math.max(0, StreamLog.nextAfter(head) - Math.max(first.seq, countedFrom(topic, p))) : 0;
      });
      approximateMessages = counts.reduce((a, b) => a + b, 0);
    }
    const subscribers = (await this.stores.catalog.allGroups())
      .filter((g) => g.subscriptions.some((s) => s.topic === name))
      .map((g) => g.name);
    return { ...topicView(topic), approximateMessages, subscribers };
  }

  async listTopics(limit: number, nextToken: string | undefined) {
    const budget = pageBudget('topics');
    const page = await this.stores.catalog.listTopics(limit, nextToken, (topic) => budget.take(jsonBytes(topicView(topic)) + 1));
    return { topics: page.items.map(topicView), nextToken: page.nextToken ?? null };
  }

  /**
   * Purges a topic (POST /v1/topics/{t}/purge): every message that became
   * deliverable up to now is dropped for every group, and scheduled messages
   * sent up to now are cancelled when due; half messages stay. One
   * conditional write of the topic item (`pa` = now, `pw` = each standard
   * partition's next sequence number, for statistics), after reading the
   * partitions' heads — O(partitions), whatever the backlog. It answers only
   * once the clock has passed the purge time, so a send that starts after
   * the answer is never purged.
   */
  async purgeTopic(name: string) {
    let read = await this.stores.catalog.getTopic(name);
    if (!read) throw new TopicNotFoundError(name);
    let at = this.clock.now();
    let topic: Topic | undefined;
    // `pw` needs a head per partition: a raise meanwhile makes the purge read the heads again.
    for (let attempt = 0; !topic; attempt++) {
      // The heads first, then the time: every message below `pw` landed before `pa` was taken, so it
      // became deliverable at or before it (purged); one deliverable after `pa` lands at or above `pw`.
      const starts = await this.nextSeqs(read);
      at = this.clock.now();
      topic = await this.stores.catalog.purgeTopic(read, at, starts);
      if (topic) break;
      // Another purge recorded a time at least as late (fine), or the topic is gone or was raised.
      const now: Topic | undefined = await this.stores.catalog.getTopic(name);
      if (!now || now.generation !== read.generation) throw new TopicNotFoundError(name);
      if ((now.purgedAt ?? -1) >= at) topic = now;
      else if (now.partitions === read.partitions) throw new TopicNotFoundError(name);
      else if (attempt + 1 < SAVE_GROUP_ATTEMPTS) read = now;
      else throw new ConflictError(`Topic '${name}' kept changing its partitions while this request tried to purge it; retry.`);
    }
    for (let i = 0; i < PURGE_CLOCK_WAITS && this.clock.now() <= at; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    return { topic: topic.name, purgedAt: iso(topic.purgedAt ?? at) };
  }

  async deleteTopic(name: string) {
    await this.stores.catalog.deleteTopic(name, this.clock.now());
  }

  /**
   * Creates or replaces a group (PUT): every setting not given takes its
   * default, except `deliveryMode`, which an existing group keeps. Cursors for
   * every subscribed stream are created before the group item, at the
   * streams' current heads: the group sees every message that becomes
   * deliverable after its subscription exists.
   */
  async putGroup(name: string, input: GroupInput) {
    return this.saveGroup(name, () => input);
  }

  /**
   * Changes only the settings given (PATCH) of an existing group (404 if
   * none); the same rules as {@link putGroup} apply to the result. Written
   * conditionally on the group as read, so a concurrent change is merged
   * again rather than overwritten.
   */
  async patchGroup(name: string, patch: Partial<GroupInput>) {
    return this.saveGroup(name, (existing) => {
      if (!existing) throw new GroupNotFoundError(name);
      const given = <K extends keyof GroupInput>(key: K, current: GroupInput[K]): GroupInput[K] =>
        patch[key] === undefined ? current : (patch[key] as GroupInput[K]);
      return {
        subscriptions: given('subscriptions', existing.subscriptions),
        deliveryMode: given('deliveryMode', existing.deliveryMode),
        visibilityTimeoutSeconds: given('visibilityTimeoutSeconds', existing.visibilityTimeoutSeconds),
        maxDeliveries: given('maxDeliveries', existing.maxDeliveries),
        // A partial policy changes only the fields it gives.
        retryPolicy: { ...existing.retryPolicy, ...patch.retryPolicy },
        deadLetterTopic: given('deadLetterTopic', existing.deadLetterTopic),
        // null turns a push group back into a pull group; a partial push changes only the fields it gives.
        push: patch.push === null ? null : patch.push === undefined ? existingPushInput(existing.push) : { ...existingPushInput(existing.push), ...withoutOtherTarget(patch.push) },
      };
    });
  }

  /**
   * Reads the group, decides its settings from what it read, and writes them
   * conditionally on that read; a lost race reads and decides again.
   */
  private async saveGroup(name: string, settingsFor: (existing: Group | undefined) => GroupInput) {
    for (let attempt = 0; attempt < SAVE_GROUP_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      const { group: existing, deletedAt } = await this.stores.catalog.groupRecord(name);
      const windowEnd = deletedAt === undefined ? undefined : deletedAt + this.stores.catalog.recreateAfterMs;
      if (!existing && windowEnd !== undefined && windowEnd > now) {
        throw new GroupRecentlyDeletedError(name, Math.max(1, Math.ceil((windowEnd - now) / 1000)));
      }
      const input = settingsFor(existing);
      // Checked before anything is written: a bad policy changes nothing.
      const retryPolicy = resolveRetryPolicy(input.retryPolicy);
      const push = input.push ? await this.checkPush(input.push) : undefined;
      const deadLetterTopic = input.deadLetterTopic ?? `${name}-dlq`;
      if (deadLetterTopic.length > Limits.nameMaxLength) {
        throw new InvalidArgumentError(
          `The default dead-letter topic name '${name}-dlq' is longer than ${Limits.nameMaxLength} characters; name one with deadLetterTopic.`,
          { issues: [{ path: 'deadLetterTopic', message: 'required for group names over 124 characters' }] },
        );
      }
      const names = input.subscriptions.map((s) => s.topic);
      const duplicate = names.findIndex((topic, i) => names.indexOf(topic) !== i);
      if (duplicate >= 0) {
        throw new InvalidArgumentError(`Topic '${names[duplicate]}' is subscribed twice.`, {
          issues: [{ path: `subscriptions/${duplicate}/topic`, message: 'duplicate subscription' }],
        });
      }
      const selfLoop = names.indexOf(deadLetterTopic);
      if (selfLoop >= 0) {
        throw new InvalidArgumentError('A group cannot subscribe to its own dead-letter topic.', {
          issues: [{ path: `subscriptions/${selfLoop}/topic`, message: 'is the dead-letter topic of this group' }],
        });
      }
      const topics = await this.stores.catalog.getTopics(names);
      const missing = names.findIndex((topic) => !topics.has(topic));
      if (missing >= 0) throw new TopicNotFoundError(names[missing] ?? '');
      // `startFrom` belongs to the moment a subscription is added: a subscription the group already
      // has keeps the one it was added with (a re-PUT or PATCH changes nothing there).
      const subscriptions = input.subscriptions.map((s) => {
        const kept = existing?.subscriptions.find((e) => e.topic === s.topic);
        const startFrom = kept ? kept.startFrom : s.startFrom;
        const since = kept ? kept.since : existing ? now : undefined;
        return { topic: s.topic, tags: s.tags, ...(startFrom === 'earliest' ? { startFrom } : {}), ...(since === undefined ? {} : { since }) };
      });
      const pushCounts = pushCountChanges(pushTopics(existing), pushTopics({ push, subscriptions }));
      refuseFullPushTopics(pushCounts, topics, names);
      const earliest = new Set(subscriptions.filter((s) => s.startFrom === 'earliest').map((s) => s.topic));
      const deliveryMode = input.deliveryMode ?? existing?.deliveryMode ?? 'serialized';
      if (existing && existing.deliveryMode !== deliveryMode && (await this.figures.hasInFlight(existing))) {
        throw new ConflictError('deliveryMode cannot change while messages of the group are in flight.');
      }
      // Dead-letter copies are appended to a partition stream: a FIFO topic's receives and look-ups
      // would never find them (it has shard streams). Sluice creates the topic standard when missing.
      const deadLetter = await this.stores.catalog.getTopic(deadLetterTopic);
      if (deadLetter?.type === 'fifo') {
        throw new InvalidArgumentError(`The dead-letter topic '${deadLetterTopic}' is a FIFO topic; a dead-letter topic must be a standard topic.`, {
          issues: [{ path: 'deadLetterTopic', message: 'names a FIFO topic' }],
        });
      }
      // Refused before anything is written when the read shows it full; the save's transaction keeps the bound.
      const namedBy = deadLetter?.deadLetterGroups ?? [];
      if (namedBy.length >= Limits.deadLetterGroupsPerTopicMax && !namedBy.includes(name)) {
        throw new TooManyDeadLetterGroupsError(deadLetterTopic, Limits.deadLetterGroupsPerTopicMax);
      }
      // New subscriptions to standard topics: the save is conditional on the partition count it
      // created cursors for, and a partition raise on the saves (docs/design.md, Raising partitions).
      const newlySubscribed = [...topics.values()].filter((t) => t.type === 'standard' && !existing?.subscriptions.some((s) => s.topic === t.name));
      // A save whose transaction could pass 4 MB (many topic items with long lists) is refused before any write.
      await this.stores.catalog.refuseOversizedGroupSave(name, newlySubscribed.map((t) => t.name), pushCounts, deadLetterTopic, existing?.deadLetterTopic);
      try {
        await ensureDeadLetterTopic(this.stores, deadLetterTopic, now);
      } catch (error) {
        // Created meanwhile in another shape (a FIFO PUT between the read above and this create):
        // the next try reads it and answers what it is.
        if (error instanceof ConflictError && !(error instanceof TopicRecentlyDeletedError) && attempt + 1 < SAVE_GROUP_ATTEMPTS) continue;
        throw error;
      }
      // A group of this name was deleted: its cursors (and any a stale container created in the
      // re-create window) go before the new group's cursors are created.
      // So do cursors a crash left: a delete cut off after its tombstone (whose TTL may have removed it
      // since) or a create cut off before its group write. A racing create's cursors are younger than
      // one API request (CREATE_RACE_MS) and stay.
      if (!existing) await this.stores.cursors.removeCreatedUpTo(name, Math.max(windowEnd ?? 0, now - CREATE_RACE_MS));
      else {
        // A subscription added to a live group starts at latest: cursors of its streams left by an
        // earlier subscription to the topic (dropped since) or by a save cut off before its group
        // write go first. A namespace a kept subscription reads (a time-order group's) stays.
        const kept = new Set(subscriptions.filter((s) => existing.subscriptions.some((e) => e.topic === s.topic)).map((s) => streamNamespace(topics.get(s.topic)!)));
        const added = new Set(subscriptions.filter((s) => !existing.subscriptions.some((e) => e.topic === s.topic)).map((s) => streamNamespace(topics.get(s.topic)!)));
        for (const namespace of added) if (!kept.has(namespace)) await this.stores.cursors.removeCreatedUpTo(name, now - CREATE_RACE_MS, 8, `${namespace}/`);
      }
      // Standard topics: one cursor per partition. FIFO topics: one per notice stream of the
      // namespace; shard cursors are created when the group first hears of a shard.
      // `earliest`: partition cursors start at the first retained message of the current generation,
      // notice cursors at the first retained notice (the shards they announce start at their first
      // retained message: Receiver.shardStart). A cursor that exists already never moves.
      const streams = new Map<string, number | undefined>();
      for (const topic of topics.values()) {
        if (topic.type === 'standard') {
          for (let p = 0; p < topic.partitions; p++) {
            streams.set(streamId(topic, { kind: 'partition', partition: p }), earliest.has(topic.name) ? countedFrom(topic, p) : undefined);
          }
        } else {
          // Topics of one order group share their notice streams: they are read from the start only
          // when every subscribed topic of the namespace is `earliest` (else old notices would start
          // the shards of a `latest` topic below its subscription).
          const namespace = streamNamespace(topic);
          const allEarliest = [...topics.values()].every((t) => streamNamespace(t) !== namespace || earliest.has(t.name));
          for (const stream of noticeStreamsOf(topic)) streams.set(stream, allEarliest ? 1 : undefined);
        }
      }
      // Up to subscriptionsMax × partitionsMax cursors, all on this group's key (C#<group>, about
      // 1,000 writes a second on AWS): a bounded number in flight.
      await mapBounded([...streams], PARTITION_CALLS_IN_FLIGHT, async ([stream, floor]) => {
        await this.stores.cursors.createIfAbsent(name, stream, await this.startOf(stream, floor), now);
      });
      // A push group gets its signing secret with its first push settings (answered once, kept after).
      const signingSecret = push && !existing?.pushSecret ? newSigningSecret() : undefined;
      const sealedSecret = signingSecret === undefined || !this.push ? undefined : await this.push.secrets.seal(signingSecret, pushSecretContext(name));
      const group = await this.stores.catalog.putGroup(
        {
          name,
          subscriptions,
          deliveryMode,
          visibilityTimeoutSeconds: input.visibilityTimeoutSeconds ?? Limits.visibilityDefaultSeconds,
          maxDeliveries: input.maxDeliveries ?? Limits.maxDeliveriesDefault,
          retryPolicy,
          deadLetterTopic,
          push,
        },
        now,
        existing ? { version: existing.version } : 'absent',
        newlySubscribed,
        { sealedSecret, pushCounts, previousDeadLetterTopic: existing?.deadLetterTopic },
      );
      if (group) {
        return { group: { ...groupView(group), ...(signingSecret === undefined ? {} : { signingSecret }) }, created: existing === undefined };
      }
    }
    throw new ConflictError(`Consumer group '${name}' kept changing while this request tried to save it; retry.`);
  }

  /**
   * Push settings as a save writes them: ranges and defaults, then the
   * target — a URL by the checker URL rules (SPEC §4: https, no private
   * address; http on loopback only in the local runtime) resolved through the
   * SSRF guard, or a Lambda function the deployment allows (none locally).
   */
  private async checkPush(input: PushInput): Promise<PushSettings> {
    const push = resolvePush(input);
    if (!this.push) throw new InvalidArgumentError('Push groups are not enabled in this deployment.', { issues: [{ path: 'push', message: 'not enabled' }] });
    const { url, lambdaArn } = push.target;
    if (url !== undefined) {
      const problem = url.length > 2048 ? 'must be at most 2048 characters' : checkerUrlProblem(url, this.push.policy);
      if (problem) throw new InvalidArgumentError(`push.url ${problem}.`, { issues: [{ path: 'push/url', message: problem }] });
      try {
        await this.push.webhooks.vet(url);
      } catch (error) {
        const reason = (error instanceof Error ? error.message : 'refused').replace(/^checkerUrl/, 'push.url');
        throw new InvalidArgumentError(`${reason}.`, { issues: [{ path: 'push/url', message: reason }] });
      }
    } else if (this.push.lambdaArns === undefined) {
      throw new InvalidArgumentError('push.lambdaArn needs the AWS runtime: the local runtime has no Lambda functions to invoke; use push.url.', {
        issues: [{ path: 'push/lambdaArn', message: 'not available on the local runtime' }],
      });
    } else if (!this.push.lambdaArns.includes(lambdaArn ?? '')) {
      throw new InvalidArgumentError(
        `push.lambdaArn '${lambdaArn}' is not one of the functions this deployment may invoke (the construct's pushTargets).`,
        { issues: [{ path: 'push/lambdaArn', message: 'not an allowed push target' }] },
      );
    }
    return push;
  }

  /**
   * Issues a new signing secret for a push group (POST /v1/groups/{g}/rotate-secret);
   * the previous one keeps signing next to it for a day. 400 for a group that
   * never had push settings (it has no secret).
   */
  async rotatePushSecret(name: string) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const group = await this.stores.catalog.getGroup(name);
      if (!group) throw new GroupNotFoundError(name);
      if (!group.pushSecret || !this.push) {
        throw new InvalidArgumentError(`Consumer group '${name}' is not a push group: it has no signing secret.`, {
          issues: [{ path: 'group', message: 'not a push group' }],
        });
      }
      const secret = newSigningSecret();
      const now = this.clock.now();
      const sealed = await this.push.secrets.seal(secret, pushSecretContext(name));
      // A rotation right after another (within one request's life) is taken for the retry of one whose
      // answer was lost: the secret held before that one keeps signing next to the new one.
      const { previous, previousUntil, rotatedAt } = group.pushSecret;
      const retried = previous !== undefined && (previousUntil ?? 0) > now && now - rotatedAt < Limits.secretRotationRetryMs;
      const keep = retried ? { previous, until: previousUntil! } : { previous: group.pushSecret.sealed, until: now + Limits.secretRotationGraceSeconds * 1000 };
      if (await this.stores.catalog.rotatePushSecret(name, group.pushSecret.sealed, sealed, keep.until, now, keep.previous)) {
        return { ...groupView(group), secretRotatedAt: iso(now), signingSecret: secret };
      }
    }
    throw new ConflictError('The secret was rotated concurrently; retry.');
  }

  /**
   * Where a new cursor on `stream` starts: after the head (`latest`, `floor`
   * undefined), or at the first message still stored and at least `floor`
   * (`earliest`: `floor` is where the topic's current generation starts).
   * Expired records or ones of a dead generation below it are passed over by
   * the first receive, as anywhere in a stream.
   */
  private async startOf(stream: string, floor: number | undefined): Promise<number> {
    const head = await this.stores.log.head(stream);
    if (floor === undefined) return StreamLog.nextAfter(head);
    const first = await this.stores.log.first(stream);
    if (!first) return StreamLog.nextAfter(head);
    return Math.min(Math.max(first.seq, floor), StreamLog.nextAfter(head));
  }

  /**
   * Deletes a group: its item becomes a tombstone at once (receive, commit and
   * visibility answer 404 GroupNotFound; other containers within the catalog
   * cache lifetime), then its cursors — positions, leases in flight, FIFO
   * ready-index entries — are deleted. Its dead-letter topic stays. Pending
   * outputs of protected commits are left to their TTL.
   */
  async deleteGroup(name: string): Promise<{ cursorsRemoved: number }> {
    let now = this.clock.now();
    for (let attempt = 0; ; attempt++) {
      // A push group's topics lose its push count in the same transaction, conditional on the group as read.
      const group = await this.stores.catalog.getGroup(name);
      if (!group) throw new GroupNotFoundError(name);
      now = this.clock.now();
      if (await this.stores.catalog.deleteGroup(name, now, { version: group.version, topics: pushTopics(group), deadLetterTopic: group.deadLetterTopic })) {
        await this.deleteDoorbell(group.doorbellQueueUrl);
        await this.unparkDoorbell(group);
        const cursorsRemoved = await this.stores.cursors.removeCreatedUpTo(name, now);
        // After the cursors: a dead-letter transaction still in flight needs its lease, which is gone
        // now. Nothing reads the counters any more (keyed by the group's creation); a failure leaves
        // ≤ 8 small items that nothing reads, and never fails the delete.
        await this.stores.deadLetterCounts.remove(name, group.createdAt).catch((error: unknown) => this.doorbells?.log?.('dead-letter counters removal failed', { group: name, error }));
        return { cursorsRemoved };
      }
      if (attempt + 1 >= SAVE_GROUP_ATTEMPTS) throw new ConflictError(`Consumer group '${name}' kept changing while this request tried to delete it; retry.`);
    }
  }

  /** Deletes a deleted group's doorbell queue, after its transaction (a re-created group gets a queue of another name). */
  private async deleteDoorbell(queueUrl: string | undefined): Promise<void> {
    if (queueUrl === undefined || !this.doorbells) return;
    try {
      await this.doorbells.queues.remove(queueUrl);
    } catch (error) {
      this.doorbells.log?.('doorbell queue delete failed', { queueUrl, error });
    }
  }

  /**
   * Removes a deleted pull group's `wb` entries from its topics, after its
   * transaction (a topic's map is capped, docs/design.md "Limits by
   * construction"). A failure is logged and leaves the entry (it rings
   * nobody: the route finds no group), one slot of the map lost.
   */
  private async unparkDoorbell(group: Group): Promise<void> {
    if (group.push) return;
    const topics = [...new Set(group.subscriptions.map((s) => s.topic))];
    const results = await Promise.allSettled(topics.map((topic) => this.stores.catalog.unparkGroup(topic, group.name)));
    results.forEach((result, i) => {
      if (result.status === 'rejected') this.doorbells?.log?.('doorbell park entry removal failed', { topic: topics[i], group: group.name, error: result.reason });
    });
  }

  async getGroup(name: string) {
    const group = await this.stores.catalog.getGroup(name);
    if (!group) throw new GroupNotFoundError(name);
    const view = groupView(group);
    // A push group's last attempts (one read of its push-state item).
    const push = view.push
      ? {
          ...view.push,
          lastAttempts: (await this.stores.pushState.lastAttempts(name)).map((a) => ({ ...a, at: iso(a.at) })),
        }
      : null;
    return { ...view, push, ...(await this.figures.of(group)) };
  }

  /**
   * Backlog, in-flight, oldest-message age and dead-letter figures of every
   * group (the per-group metrics). Reads per group: its cursors (one Query
   * page; past it, the cursors with work: group-figures.ts), each subscribed
   * partition's head, the oldest message's segment and the dead-letter
   * counters (eventually consistent) — a cost that follows the number of
   * groups, streams and shards with work, not the traffic.
   */
  async groupFigures(options: { parallel?: number; each?: (figures: { group: string } & GroupFigureValues) => void } = {}) {
    const { parallel = 4, each } = options;
    const groups = await this.stores.catalog.allGroups();
    const out: Array<{ group: string } & GroupFigureValues> = [];
    for (let i = 0; i < groups.length; i += parallel) {
      const figures = await Promise.all(groups.slice(i, i + parallel).map(async (group) => ({ group: group.name, ...(await this.figures.of(group, false)) })));
      // Handed on as they come: a run cut short by its time-out has still published the groups it did.
      figures.forEach((f) => each?.(f));
      out.push(...figures);
    }
    return out;
  }

  async listGroups(limit: number, nextToken: string | undefined) {
    const budget = pageBudget('groups');
    const page = await this.stores.catalog.listGroups(limit, nextToken, (group) => budget.take(jsonBytes(groupView(group)) + 1));
    return { groups: page.items.map(groupView), nextToken: page.nextToken ?? null };
  }
}
