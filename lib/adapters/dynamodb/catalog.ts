/**
 * Topics and consumer groups. All topics live in one item collection
 * (pk "TOPIC", sk name) and all groups in another (pk "GROUP"), so listing
 * them is a Query, never a Scan.
 *
 * A deleted topic or group stays as a tombstone (`deleted: true`, `updatedAt`
 * = when): it cannot be re-created until every container's cached copy has
 * expired (`recreateAfterMs`). Group tombstones carry a `ttl` after that.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, BatchGetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { Limits, type DeliveryMode, type Group, type SealedSecret, type Subscription, type Topic, type TopicType } from '../../domain/model.js';
import { DoorbellLimits, DoorbellParkRefusedError } from '../../domain/doorbell-limits.js';
import { PushLimits, type PushSettings } from '../../domain/push.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../domain/retry-policy.js';
import {
  ConflictError,
  GroupNotFoundError,
  InvalidArgumentError,
  TooManyDeadLetterGroupsError,
  TooManyPushGroupsError,
  TopicItemsTooLargeError,
  TopicNotFoundError,
  TopicRecentlyDeletedError,
} from '../../domain/errors.js';
import { call, conditionalWithImage } from './call.js';
import { cancellationReasons, isConditionalFailure } from './errors.js';
import { boundTopicUpdates, topicUpdatesBytes } from './bounded-topic-updates.js';
import { TRANSACTION_MAX_BYTES } from './item-size.js';
import { GROUP_PK, TOPIC_PK } from './keys.js';
import { newTryToken, TRY_TOKEN } from './try-token.js';

export interface TopicSpec {
  name: string;
  type: TopicType;
  retentionSeconds: number;
  maxDelaySeconds: number;
  orderGroup: string | undefined;
  partitions: number;
  /** Stored as `sq: true` only when set (a sequenced FIFO topic); fixed at creation. */
  sequenced?: boolean | undefined;
}

export interface Page<T> {
  items: T[];
  nextToken: string | undefined;
}

const encodeToken = (key: Record<string, unknown> | undefined) =>
  key ? Buffer.from(JSON.stringify(key), 'utf8').toString('base64url') : undefined;
export const encodePageToken = encodeToken;
/** Items a listing Query asks for at least, and Queries a listing page makes at most (tombstones are filtered after the read). */
const LIST_READ_MIN = 100;
const LIST_QUERIES_MAX = 4;
/** Page tokens are the last evaluated key; a token for another collection is refused (400). */
export const decodePageToken = (token: string | undefined, pk: string): Record<string, unknown> | undefined => {
  if (token === undefined) return undefined;
  try {
    const key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    // Exactly the table's key, as a listing answers it: anything else DynamoDB refuses (a 500).
    if (typeof key === 'object' && key !== null && !Array.isArray(key)) {
      const { pk: tokenPk, sk, ...rest } = key as { pk?: unknown; sk?: unknown };
      if (tokenPk === pk && typeof sk === 'string' && sk !== '' && Buffer.byteLength(sk) <= 1024 && Object.keys(rest).length === 0) return { pk, sk };
    }
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('nextToken is not a page token returned by this listing.', {
    issues: [{ path: 'nextToken', message: 'malformed page token' }],
  });
};

const toTopic = (item: Record<string, unknown>): Topic => ({
  name: String(item.sk),
  type: item.type as TopicType,
  retentionSeconds: Number(item.retentionSeconds),
  maxDelaySeconds: Number(item.maxDelaySeconds),
  orderGroup: item.orderGroup === undefined ? undefined : String(item.orderGroup),
  partitions: Number(item.partitions),
  ...(item.sq === true ? { sequenced: true } : {}),
  createdAt: Number(item.createdAt),
  generation: Number(item.generation),
  ...(Array.isArray(item.gs) ? { generationStarts: (item.gs as unknown[]).map(Number) } : {}),
  ...(item.pa === undefined ? {} : { purgedAt: Number(item.pa) }),
  ...(Array.isArray(item.pw) ? { purgeStarts: (item.pw as unknown[]).map(Number) } : {}),
  ...(item.pu === undefined ? {} : { pushSubscriptions: Number(item.pu) }),
  ...(item.pg === undefined ? {} : { pushGroups: [...(item.pg as Iterable<unknown>)].map(String).sort() }),
  ...(item.dg === undefined ? {} : { deadLetterGroups: [...(item.dg as Iterable<unknown>)].map(String).sort() }),
  ...(item.wu === undefined ? {} : { parkedUntil: Number(item.wu) }),
  ...(typeof item.wb === 'object' && item.wb !== null
    ? { doorbellGroups: Object.fromEntries(Object.entries(item.wb as Record<string, unknown>).map(([g, until]) => [g, Number(until)])) }
    : {}),
  ...(item.sv === undefined ? {} : { subscriptionSaves: Number(item.sv) }),
});

/** `rp` {i, m, x}: initialSeconds, multiplier, maxSeconds; absent (groups saved before it existed): the defaults. */
const toRetryPolicy = (stored: unknown): RetryPolicy => {
  if (typeof stored !== 'object' || stored === null) return DEFAULT_RETRY_POLICY;
  const { i, m, x } = stored as Record<string, unknown>;
  return { initialSeconds: Number(i), multiplier: Number(m), maxSeconds: Number(x) };
};

/** `ph` {u | la, b, t, c}: url or lambdaArn, batchSize, timeoutSeconds, maxConcurrency; absent: a pull group. */
const toPush = (stored: unknown): PushSettings | undefined => {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { u, la, b, t, c } = stored as Record<string, unknown>;
  return {
    target: la === undefined ? { url: String(u) } : { lambdaArn: String(la) },
    batchSize: Number(b),
    timeoutSeconds: Number(t),
    maxConcurrency: Number(c),
  };
};
const storedPush = (push: PushSettings) => ({
  ...(push.target.url !== undefined ? { u: push.target.url } : { la: push.target.lambdaArn }),
  b: push.batchSize,
  t: push.timeoutSeconds,
  c: push.maxConcurrency,
});
/**
 * Item `index` of a cancelled transaction: its old image when its condition failed and the item
 * existed (asked for with `ReturnValuesOnConditionCheckFailure: ALL_OLD`), null when its condition
 * failed on no item, undefined when it did not fail its condition.
 */
const failedImage = (error: unknown, index: number): Record<string, unknown> | null | undefined => {
  const reason = (error as { CancellationReasons?: Array<{ Code?: string; Item?: Record<string, AttributeValue> }> }).CancellationReasons?.[index];
  if (reason?.Code !== 'ConditionalCheckFailed') return undefined;
  return reason.Item ? unmarshall(reason.Item) : null;
};

/** Whether a live standard topic (its old image) is named as dead-letter topic by the most groups it can be, `group` not among them. */
const deadLetterIsFull = (old: Record<string, unknown>, group: string): boolean => {
  const named = old.dg instanceof Set ? (old.dg as Set<string>) : new Set<string>();
  return old.deleted !== true && old.type === 'standard' && named.size >= Limits.deadLetterGroupsPerTopicMax && !named.has(group);
};

/**
 * The topic items a group save's transaction updates, each once (a transaction may not touch an item
 * twice): the standard topics it newly subscribes to, the topics that gain or lose it as a push group
 * (`pushCounts`, no zeros), its dead-letter topic and the one it named before. A topic the group named
 * as its dead-letter topic before may be one it subscribes to now, and a push topic it leaves may be
 * its dead-letter topic now. A group never subscribes to its own dead-letter topic.
 */
const groupSaveTopics = (newlySubscribed: Iterable<string>, pushCounts: ReadonlyMap<string, number>, deadLetter: { topic: string; previous: string | undefined }): string[] => [
  ...new Set([...newlySubscribed, ...pushCounts.keys(), deadLetter.topic, ...(deadLetter.previous === undefined ? [] : [deadLetter.previous])]),
];

/** What a group save adds to a topic item's lists: its name in `pg` (gains it as a push group), in `dg` (names it). */
const groupSaveAdds = (topic: string, pushCounts: ReadonlyMap<string, number>, deadLetterTopic: string) => ({
  pushGroups: (pushCounts.get(topic) ?? 0) > 0 ? 1 : 0,
  deadLetterGroups: topic === deadLetterTopic ? 1 : 0,
});

/** A group save or delete whose topic items' lists may pass one transaction's bytes (bounded-topic-updates.ts). */
const topicItemsTooLarge = (change: 'save' | 'delete', group: string, topics: number, bytes: number): TopicItemsTooLargeError =>
  new TopicItemsTooLargeError(
    change === 'save'
      ? `Saving consumer group '${group}' changes ${topics} topic items whose push-group, parked-group and dead-letter-group lists may together take ${megabytes(bytes)}, more than Sluice puts in one DynamoDB transaction (3.9 MB of its 4 MB); the group was not saved. Save it in steps: add or remove fewer subscriptions at a time, or switch between pull and push with fewer subscriptions.`
      : `Deleting consumer group '${group}' changes ${topics} topic items whose push-group, parked-group and dead-letter-group lists may together take ${megabytes(bytes)}, more than Sluice puts in one DynamoDB transaction (3.9 MB of its 4 MB); the group was not deleted. Remove some of its subscriptions first (PATCH), then delete it.`,
  );

/** Bytes as a reader sees them: `4.3 MB`. */
const megabytes = (bytes: number): string => `${(Math.ceil(bytes / 100_000) / 10).toFixed(1)} MB`;

/** The topic-item update that takes a deleted group out of its dead-letter topic's `dg`. */
const deadLetterUnnaming = (table: string, group: string, topic: string) => ({
  Update: {
    TableName: table,
    Key: { pk: TOPIC_PK, sk: topic },
    UpdateExpression: 'DELETE dg :dg',
    // Never on no item (an update would create a bare topic item); the old image tells a missing one.
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':dg': new Set([group]) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  },
});

/** `ps` sealed secret, `pp` the previous one until `ppu`, `psa` when it was created or rotated. */
const toPushSecret = (item: Record<string, unknown>): SealedSecret | undefined =>
  item.ps === undefined
    ? undefined
    : {
        sealed: String(item.ps),
        ...(item.pp === undefined ? {} : { previous: String(item.pp), previousUntil: Number(item.ppu) }),
        rotatedAt: Number(item.psa),
      };

const toGroup = (item: Record<string, unknown>): Group => ({
  name: String(item.sk),
  subscriptions: (item.subscriptions as Subscription[]).map((s) => ({
    topic: s.topic,
    tags: s.tags ?? undefined,
    ...(s.startFrom === 'earliest' ? { startFrom: s.startFrom } : {}),
    ...((s as { at?: unknown }).at === undefined ? {} : { since: Number((s as { at?: unknown }).at) }),
  })),
  deliveryMode: item.deliveryMode as DeliveryMode,
  visibilityTimeoutSeconds: Number(item.visibilityTimeoutSeconds),
  maxDeliveries: Number(item.maxDeliveries),
  retryPolicy: toRetryPolicy(item.rp),
  deadLetterTopic: String(item.deadLetterTopic),
  createdAt: Number(item.createdAt),
  updatedAt: Number(item.updatedAt),
  version: item.v === undefined ? 0 : Number(item.v),
  ...(item.rd === undefined ? {} : { redriveUntil: Number(item.rd) }),
  ...(item.rv === undefined ? {} : { redriven: Number(item.rv) }),
  ...(item.ph === undefined ? {} : { push: toPush(item.ph) }),
  ...(item.ps === undefined ? {} : { pushSecret: toPushSecret(item) }),
  ...(item.bq === undefined ? {} : { doorbellQueueUrl: String(item.bq) }),
});

/**
 * How long the data plane may use a topic or group item it read before
 * (per container). 0 (the default) reads the table every time.
 */
export interface CatalogOptions {
  cacheTtlMs?: number;
  now?: () => number;
}

/** How long a group tombstone outlives its re-create window before TTL removes it. */
const GROUP_TOMBSTONE_TTL_SECONDS = 86_400;

interface Cached<T> {
  value: T;
  until: number;
}

/** `wb` takes a new group only below the cap; a group already in it may always refresh its entry. */
const WB_CAP = '(size(wb) < :max OR attribute_exists(wb.#g))';

export class Catalog {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly topicCache = new Map<string, Cached<Topic>>();
  private readonly groupCache = new Map<string, Cached<Group>>();

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    options: CatalogOptions = {},
  ) {
    this.ttlMs = options.cacheTtlMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  /**
   * A deleted topic can be re-created once every container's cached copy of
   * it has expired (twice the cache lifetime), so that no send can still
   * stamp a message with the old generation after the new one exists.
   */
  get recreateAfterMs(): number {
    return 2 * this.ttlMs;
  }

  // ── cached reads (data plane: send, receive, commit) ────────────────────
  // Only live items are cached: a topic or group created a moment ago is
  // found at once everywhere; a change or a deletion reaches other
  // containers within `cacheTtlMs` (writes through this instance at once).

  /** A live topic, from this container's cache when it is fresh enough. */
  async topic(name: string): Promise<Topic | undefined> {
    return this.cachedOf(this.topicCache, name) ?? (await this.getTopic(name));
  }

  /** Live topics by name, reading only the ones not cached. */
  async topics(names: readonly string[]): Promise<Map<string, Topic>> {
    const out = new Map<string, Topic>();
    const missing: string[] = [];
    for (const name of new Set(names)) {
      const hit = this.cachedOf(this.topicCache, name);
      if (hit) out.set(name, hit);
      else missing.push(name);
    }
    if (missing.length > 0) for (const [name, topic] of await this.getTopics(missing)) out.set(name, topic);
    return out;
  }

  /** A group, from this container's cache when it is fresh enough. */
  async group(name: string): Promise<Group | undefined> {
    return this.cachedOf(this.groupCache, name) ?? (await this.getGroup(name));
  }

  private cachedOf<T>(cache: Map<string, Cached<T>>, name: string): T | undefined {
    const hit = cache.get(name);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit.value;
    cache.delete(name);
    return undefined;
  }

  private remember<T>(cache: Map<string, Cached<T>>, name: string, value: T | undefined): void {
    if (this.ttlMs <= 0) return;
    if (value === undefined) cache.delete(name);
    else cache.set(name, { value, until: this.now() + this.ttlMs });
  }

  // ── consistent reads and writes (they refresh this container's cache) ──

  async getTopic(name: string): Promise<Topic | undefined> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: TOPIC_PK, sk: name }, ConsistentRead: true })),
    );
    const topic = Item && Item.deleted !== true ? toTopic(Item) : undefined;
    this.remember(this.topicCache, name, topic);
    return topic;
  }

  async getTopics(names: readonly string[]): Promise<Map<string, Topic>> {
    const out = new Map<string, Topic>();
    const unique = [...new Set(names)];
    for (let i = 0; i < unique.length; i += 100) {
      const keys = unique.slice(i, i + 100).map((sk) => ({ pk: TOPIC_PK, sk }));
      const result = await call(() =>
        this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } })),
      );
      for (const item of result.Responses?.[this.table] ?? []) {
        const topic = item.deleted !== true ? toTopic(item) : undefined;
        this.remember(this.topicCache, String(item.sk), topic);
        if (topic) out.set(topic.name, topic);
      }
      const left = result.UnprocessedKeys?.[this.table]?.Keys ?? [];
      for (const key of left) {
        const topic = await this.getTopic(String(key.sk));
        if (topic) out.set(topic.name, topic);
      }
    }
    return out;
  }

  /**
   * Creates a topic, or updates the mutable settings of an existing one.
   * `type`, `orderGroup` and `sequenced` (`sq`) of a live topic never change (409). A deleted
   * topic is re-created with the next generation, so its old messages stay dead;
   * `starts(spec)` tells where the new generation starts in each partition
   * (`Topic.generationStarts`), read only when re-creating: once the topic
   * may be re-created, no writer of the old generation is left (caches expired,
   * `recreateAfterMs`), so those heads no longer move.
   */
  async putTopic(
    spec: TopicSpec,
    now: number,
    starts: (spec: TopicSpec) => Promise<number[]> = async () => [],
  ): Promise<{ topic: Topic; created: boolean }> {
    try {
      // `sequenced` is stored as `sq: true`, and only when set (toTopic reads `sq`).
      const { name: _name, sequenced: _sequenced, ...settings } = spec;
      const item = {
        pk: TOPIC_PK,
        sk: spec.name,
        ...settings,
        ...(spec.sequenced === true ? { sq: true } : {}),
        createdAt: now,
        generation: 1,
        updatedAt: now,
        deleted: false,
      };
      await call(() =>
        this.doc.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
      );
      const topic = toTopic(item);
      this.remember(this.topicCache, topic.name, topic);
      return { topic, created: true };
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
    const sequenced = spec.sequenced === true;
    const sameShape =
      '#type = :type AND ' +
      (spec.orderGroup === undefined ? 'attribute_not_exists(orderGroup)' : 'orderGroup = :og') +
      (sequenced ? ' AND sq = :true' : ' AND attribute_not_exists(sq)');
    const live = await this.updateTopic(
      spec.name,
      'SET retentionSeconds = :r, maxDelaySeconds = :d, updatedAt = :now',
      `deleted <> :true AND ${sameShape}`,
      { ':r': spec.retentionSeconds, ':d': spec.maxDelaySeconds, ':now': now, ':true': true, ':type': spec.type, ...(spec.orderGroup === undefined ? {} : { ':og': spec.orderGroup }) },
    );
    if (live) {
      this.remember(this.topicCache, live.name, live);
      return { topic: live, created: false };
    }
    const revived = await this.updateTopic(
      spec.name,
      'SET retentionSeconds = :r, maxDelaySeconds = :d, updatedAt = :now, createdAt = :now, #type = :type, ' +
        '#partitions = :p, deleted = :false, #generation = #generation + :one, gs = :gs' +
        (spec.orderGroup === undefined ? '' : ', orderGroup = :og') +
        (sequenced ? ', sq = :true' : '') +
        ` REMOVE ${spec.orderGroup === undefined ? 'orderGroup, ' : ''}${sequenced ? '' : 'sq, '}pa, pw, ${TRY_TOKEN}`,
      // A FIFO topic is never some group's dead-letter topic (`dg`: putGroupWithTopics).
      `deleted = :true AND updatedAt <= :deletedBy${spec.type === 'fifo' ? ' AND attribute_not_exists(dg)' : ''}`,
      {
        ':deletedBy': now - this.recreateAfterMs,
        ':r': spec.retentionSeconds,
        ':d': spec.maxDelaySeconds,
        ':now': now,
        ':type': spec.type,
        ':p': spec.partitions,
        ':true': true,
        ':false': false,
        ':one': 1,
        ':gs': await starts(spec),
        ...(spec.orderGroup === undefined ? {} : { ':og': spec.orderGroup }),
      },
    );
    if (revived) {
      this.remember(this.topicCache, revived.name, revived);
      return { topic: revived, created: true };
    }
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: TOPIC_PK, sk: spec.name }, ConsistentRead: true })),
    );
    if (Item?.deleted === true) {
      const waitMs = Number(Item.updatedAt) + this.recreateAfterMs - now;
      if (waitMs <= 0 && spec.type === 'fifo' && Item.dg instanceof Set && Item.dg.size > 0) {
        const [holder] = [...(Item.dg as Set<string>)].sort();
        throw new ConflictError(`Topic '${spec.name}' is the dead-letter topic of group '${holder}': it must stay a standard topic.`);
      }
      throw new TopicRecentlyDeletedError(spec.name, Math.max(1, Math.ceil(waitMs / 1000)));
    }
    throw new ConflictError(
      `Topic '${spec.name}' already exists with a different type, orderGroup or sequenced; delete it first to change them.`,
    );
  }

  /**
   * Sets only the given mutable settings of a live topic, conditional on the
   * generation the caller read (a topic deleted, or deleted and re-created,
   * meanwhile fails). Undefined when the condition failed.
   */
  async patchTopic(
    name: string,
    generation: number,
    changes: { retentionSeconds?: number | undefined; maxDelaySeconds?: number | undefined },
    now: number,
  ): Promise<Topic | undefined> {
    const sets = ['updatedAt = :now'];
    const values: Record<string, unknown> = { ':now': now, ':true': true, ':gen': generation };
    if (changes.retentionSeconds !== undefined) {
      sets.push('retentionSeconds = :r');
      values[':r'] = changes.retentionSeconds;
    }
    if (changes.maxDelaySeconds !== undefined) {
      sets.push('maxDelaySeconds = :d');
      values[':d'] = changes.maxDelaySeconds;
    }
    const topic = await this.updateTopic(name, `SET ${sets.join(', ')}`, 'deleted <> :true AND #generation = :gen', values);
    if (topic) this.remember(this.topicCache, topic.name, topic);
    return topic;
  }

  /**
   * Records a purge of a live topic (`pa`: the purge time, `pw`: standard
   * partitions' next sequence numbers as read for it), conditional on the
   * generation and partition count the caller read (`pw` has one entry per
   * partition) and moving `pa` only forward. Undefined when the topic was
   * deleted (or re-created) or its partitions raised meanwhile.
   */
  async purgeTopic(read: Pick<Topic, 'name' | 'generation' | 'partitions'>, at: number, starts: number[]): Promise<Topic | undefined> {
    const topic = await this.updateTopic(
      read.name,
      'SET pa = :at, pw = :pw, updatedAt = :at',
      'deleted <> :true AND #generation = :gen AND #partitions = :p AND (attribute_not_exists(pa) OR pa < :at)',
      { ':at': at, ':pw': starts, ':true': true, ':gen': read.generation, ':p': read.partitions },
    );
    if (topic) this.remember(this.topicCache, topic.name, topic);
    return topic;
  }

  /**
   * Raises the partition count of a live standard topic from `read.partitions`
   * to `partitions`, conditional on the topic as the caller read it: the same
   * generation and partition count, and no group save that added a
   * subscription since (`sv`). The caller created the new partitions' cursors
   * for every group it found subscribed after that read (docs/design.md,
   * Raising partitions). `starts` holds the new partitions' next sequence
   * numbers: they extend `gs` and `pw` where the topic has them (streams of a
   * dead generation may hold messages there). Undefined when the condition failed.
   */
  async raisePartitions(read: Topic, partitions: number, starts: number[], now: number): Promise<Topic | undefined> {
    const sets = ['#partitions = :p', 'updatedAt = :now'];
    const values: Record<string, unknown> = { ':p': partitions, ':read': read.partitions, ':gen': read.generation, ':true': true, ':now': now };
    if (read.generationStarts) {
      sets.push('gs = :gs');
      values[':gs'] = [...read.generationStarts, ...starts];
    }
    if (read.purgeStarts) {
      sets.push('pw = :pw');
      values[':pw'] = [...read.purgeStarts, ...starts];
    }
    let saves = 'attribute_not_exists(sv)';
    if (read.subscriptionSaves !== undefined) {
      saves = 'sv = :sv';
      values[':sv'] = read.subscriptionSaves;
    }
    const topic = await this.updateTopic(
      read.name,
      `SET ${sets.join(', ')}`,
      `deleted <> :true AND #type = :standard AND #generation = :gen AND #partitions = :read AND ${saves}`,
      { ...values, ':standard': 'standard' },
    );
    if (topic) this.remember(this.topicCache, topic.name, topic);
    return topic;
  }

  /**
   * Parks a pull consumer on a live topic: sets `wu` (ms) to `until` unless
   * it already reaches `keepIfAtLeast` or later, so however many consumers
   * wait, the item is written at most once per `until - keepIfAtLeast` ms.
   * Answers the topic's `wu` after the call (undefined: no live topic). When
   * it wrote, this container's cache holds the new `wu`, so sends through it
   * flag their segments at once. One write unit (the topic item is under
   * 1 KB), also when the condition fails; no read (a failed condition
   * returns the old item).
   */
  async parkTopic(name: string, until: number, keepIfAtLeast: number): Promise<number | undefined> {
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: { pk: TOPIC_PK, sk: name },
      UpdateExpression: 'SET wu = :until',
      ConditionExpression: 'attribute_exists(pk) AND deleted <> :true AND (attribute_not_exists(wu) OR wu < :keep)',
      ExpressionAttributeValues: { ':until': until, ':keep': keepIfAtLeast, ':true': true },
    });
    if (result.ok) {
      const cached = this.cachedOf(this.topicCache, name);
      if (cached) this.remember(this.topicCache, name, { ...cached, parkedUntil: until });
      return until;
    }
    const old = result.old;
    if (!old || old.deleted === true || old.wu === undefined) return undefined;
    return Number(old.wu);
  }

  /**
   * Parks a pull group on a live topic's doorbell: sets `wb.<group>` and `wu`
   * to `until` unless `wb.<group>` already reaches `keepIfAtLeast`, so the
   * item is written at most once per `until - keepIfAtLeast` ms per group
   * (docs/design.md, "Waking SDK consumers"). `wu` makes appends carry `w`,
   * which is what reaches the dispatcher's doorbell route. A topic item
   * without a `wb` map gets one by a second write conditional on its absence.
   * The map holds at most `DoorbellLimits.parkedGroupsPerTopicMax` groups
   * (the 400 KB item limit): a new group finding it full, or losing three
   * races in a row, throws {@link DoorbellParkRefusedError}.
   * Answers the group's `wb` after the call (undefined: no live topic).
   */
  async parkGroup(name: string, group: string, until: number, keepIfAtLeast: number): Promise<number | undefined> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const common = { TableName: this.table, Key: { pk: TOPIC_PK, sk: name } };
      const result = await conditionalWithImage(this.doc, {
        ...common,
        // `wu` only grows here: a doorbell park is longer than an activity park (10 min against 60 s).
        UpdateExpression: 'SET wb.#g = :until, wu = :until',
        ConditionExpression:
          `attribute_exists(pk) AND deleted <> :true AND attribute_exists(wb) AND (attribute_not_exists(wb.#g) OR wb.#g < :keep) AND (attribute_not_exists(wu) OR wu < :until) AND ${WB_CAP}`,
        ExpressionAttributeNames: { '#g': group },
        ExpressionAttributeValues: { ':until': until, ':keep': keepIfAtLeast, ':true': true, ':max': DoorbellLimits.parkedGroupsPerTopicMax },
      });
      const old = result.ok ? undefined : result.old;
      if (!result.ok && (!old || old.deleted === true)) return undefined;
      if (!result.ok && old && typeof old.wb === 'object' && old.wb !== null) {
        const map = old.wb as Record<string, unknown>;
        const kept = map[group];
        if (kept !== undefined && Number(kept) >= keepIfAtLeast) return Number(kept);
        if (kept === undefined && Object.keys(map).length >= DoorbellLimits.parkedGroupsPerTopicMax) throw new DoorbellParkRefusedError(name, group, 'full');
        // `wu` is already later than `until` (another group's park): write `wb.<group>` alone.
        const alone = await conditionalWithImage(this.doc, {
          ...common,
          UpdateExpression: 'SET wb.#g = :until',
          ConditionExpression: `attribute_exists(pk) AND deleted <> :true AND attribute_exists(wb) AND (attribute_not_exists(wb.#g) OR wb.#g < :keep) AND wu >= :until AND ${WB_CAP}`,
          ExpressionAttributeNames: { '#g': group },
          ExpressionAttributeValues: { ':until': until, ':keep': keepIfAtLeast, ':true': true, ':max': DoorbellLimits.parkedGroupsPerTopicMax },
        });
        if (alone.ok) return until;
        continue;
      }
      if (!result.ok) {
        // No `wb` map yet: create it with this group, if nobody else did meanwhile — and only over the
        // `wu` read, since the new `wu` is computed from it (a park that raised it meanwhile must not be undone).
        const oldWu = old?.wu === undefined ? undefined : Number(old.wu);
        const created = await conditionalWithImage(this.doc, {
          ...common,
          UpdateExpression: 'SET wb = :wb, wu = :wu',
          ConditionExpression: `attribute_exists(pk) AND deleted <> :true AND attribute_not_exists(wb) AND ${oldWu === undefined ? 'attribute_not_exists(wu)' : 'wu = :oldWu'}`,
          ExpressionAttributeValues: {
            ':wb': { [group]: until },
            ':wu': Math.max(until, oldWu ?? 0),
            ':true': true,
            ...(oldWu === undefined ? {} : { ':oldWu': oldWu }),
          },
        });
        if (!created.ok) continue;
      }
      const cached = this.cachedOf(this.topicCache, name);
      if (cached) this.remember(this.topicCache, name, { ...cached, parkedUntil: Math.max(until, cached.parkedUntil ?? 0) });
      return until;
    }
    throw new DoorbellParkRefusedError(name, group, 'contended');
  }

  /**
   * Removes a deleted group's `wb.<group>` entry from a topic item (one
   * conditional UpdateItem; nothing written when the entry is absent or the
   * topic is gone), so parks of deleted groups do not fill the map.
   */
  async unparkGroup(name: string, group: string): Promise<void> {
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: TOPIC_PK, sk: name },
            UpdateExpression: 'REMOVE wb.#g',
            ConditionExpression: 'attribute_exists(wb.#g)',
            ExpressionAttributeNames: { '#g': group },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }

  /**
   * Records a group's doorbell queue URL (`bq`), conditional on the group
   * being the live one created at `createdAt` (the queue's name hashes it). Not
   * a save: the version does not move, so a concurrent save neither fails this
   * write nor is failed by it. False: the group is gone or was re-created.
   */
  async recordDoorbellQueue(name: string, createdAt: number, queueUrl: string): Promise<boolean> {
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: { pk: GROUP_PK, sk: name },
      UpdateExpression: 'SET bq = :url',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted) AND createdAt = :createdAt',
      ExpressionAttributeValues: { ':url': queueUrl, ':createdAt': createdAt },
    });
    this.groupCache.delete(name);
    return result.ok;
  }

  /** A conditional update of a topic item; undefined when the condition failed. */
  private async updateTopic(
    name: string,
    update: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<Topic | undefined> {
    try {
      const { Attributes } = await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: TOPIC_PK, sk: name },
            UpdateExpression: update,
            ConditionExpression: `attribute_exists(pk) AND ${condition}`,
            ExpressionAttributeNames: Object.fromEntries(
              [...new Set(`${update} ${condition}`.match(/#\w+/g) ?? [])].map((name) => [name, name.slice(1)]),
            ),
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return Attributes ? toTopic(Attributes) : undefined;
    } catch (error) {
      if (isConditionalFailure(error)) return undefined;
      throw error;
    }
  }

  /** Marks a topic deleted; its messages expire by TTL and are never delivered again. */
  async deleteTopic(name: string, now: number): Promise<void> {
    this.topicCache.delete(name);
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: TOPIC_PK, sk: name },
            // A try token (try-token.ts): the SDK's retry of this delete, which had landed (its
            // answer lost), passes on its own tombstone instead of answering 404 for a delete that
            // took effect. 8 bytes on the tombstone (a re-create removes them).
            UpdateExpression: `SET deleted = :true, updatedAt = :now, ${TRY_TOKEN} = :tk`,
            ConditionExpression: `(attribute_exists(pk) AND deleted <> :true) OR ${TRY_TOKEN} = :tk`,
            ExpressionAttributeValues: { ':true': true, ':now': now, ':tk': newTryToken() },
          }),
        ),
      );
    } catch (error) {
      if (isConditionalFailure(error)) throw new TopicNotFoundError(name);
      throw error;
    }
  }

  /** Topics by name; `admit` may end the page early (see `list`). */
  async listTopics(limit: number, token: string | undefined, admit?: (topic: Topic) => boolean): Promise<Page<Topic>> {
    return this.list(TOPIC_PK, limit, token, (item) => (item.deleted === true ? undefined : toTopic(item)), admit);
  }

  async getGroup(name: string): Promise<Group | undefined> {
    return (await this.groupRecord(name)).group;
  }

  /** The live group, or when it was deleted (its tombstone), from a consistent read. */
  async groupRecord(name: string): Promise<{ group: Group | undefined; deletedAt: number | undefined }> {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: GROUP_PK, sk: name }, ConsistentRead: true })),
    );
    const group = Item && Item.deleted !== true ? toGroup(Item) : undefined;
    this.remember(this.groupCache, name, group);
    return { group, deletedAt: Item?.deleted === true ? Number(Item.updatedAt) : undefined };
  }

  /**
   * Writes every setting of a group. Conditional on what the caller read:
   * `expect: 'absent'` (no item, or a tombstone older than `recreateAfterMs`:
   * the group is created anew), or the `version` of the live group it read
   * (PUT and PATCH of an existing group); every save sets `v` one higher. A group deleted or changed meanwhile
   * fails the condition: undefined, nothing written.
   *
   * Push groups: `sealedSecret` is written when the save gives the group its
   * first signing secret; `pushCounts` (topic → ±1) moves each topic's `pu` in
   * the same transaction, so `pu` always counts the push groups that
   * subscribe (a topic item that is gone fails the save: undefined).
   */
  async putGroup(
    group: Omit<Group, 'createdAt' | 'updatedAt' | 'version' | 'pushSecret'>,
    now: number,
    expect: 'absent' | { version: number },
    subscribed: readonly Topic[] = [],
    push: { sealedSecret?: string | undefined; pushCounts?: ReadonlyMap<string, number> | undefined; previousDeadLetterTopic?: string | undefined } = {},
  ): Promise<Group | undefined> {
    const created = expect === 'absent';
    const values: Record<string, unknown> = {
      // `startFrom` is stored only when it is `earliest` (absent reads as `latest`).
      ':subs': group.subscriptions.map((s) => ({
        topic: s.topic,
        ...(s.tags === undefined ? {} : { tags: s.tags }),
        ...(s.startFrom === 'earliest' ? { startFrom: s.startFrom } : {}),
        ...(s.since === undefined ? {} : { at: s.since }),
      })),
      ':mode': group.deliveryMode,
      ':vt': group.visibilityTimeoutSeconds,
      ':md': group.maxDeliveries,
      ':rp': { i: group.retryPolicy.initialSeconds, m: group.retryPolicy.multiplier, x: group.retryPolicy.maxSeconds },
      ':dlq': group.deadLetterTopic,
      ':now': now,
      ':v': created ? 1 : expect.version + 1,
    };
    let condition: string;
    if (created) {
      condition = 'attribute_not_exists(pk) OR (deleted = :true AND updatedAt <= :deletedBy)';
      Object.assign(values, { ':true': true, ':deletedBy': now - this.recreateAfterMs });
    } else {
      // Items saved before versions existed have no `v`: they count as version 0.
      condition = `attribute_exists(pk) AND attribute_not_exists(deleted) AND ${expect.version === 0 ? 'attribute_not_exists(v)' : 'v = :expect'}`;
      if (expect.version !== 0) values[':expect'] = expect.version;
    }
    const sets = [
      'subscriptions = :subs, deliveryMode = :mode, visibilityTimeoutSeconds = :vt, maxDeliveries = :md, rp = :rp',
      `deadLetterTopic = :dlq, updatedAt = :now, v = :v, createdAt = ${created ? ':now' : 'if_not_exists(createdAt, :now)'}`,
    ];
    // A re-created group gets its own doorbell (its queue name hashes its creation stamp).
    const removes = created ? ['deleted', '#ttl', 'rd', 'rv', 'bq', TRY_TOKEN] : [];
    if (group.push) {
      sets.push('ph = :ph');
      values[':ph'] = storedPush(group.push);
    } else removes.push('ph');
    if (push.sealedSecret !== undefined) {
      sets.push('ps = :ps, psa = :now');
      values[':ps'] = push.sealedSecret;
      removes.push('pp', 'ppu');
    } else if (created) removes.push('ps', 'psa', 'pp', 'ppu');
    const update = {
      TableName: this.table,
      Key: { pk: GROUP_PK, sk: group.name },
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: condition,
      ...(created ? { ExpressionAttributeNames: { '#ttl': 'ttl' } } : {}),
      ExpressionAttributeValues: values,
    };
    const counts = new Map([...(push.pushCounts ?? [])].filter(([, delta]) => delta !== 0));
    const deadLetter = { topic: group.deadLetterTopic, previous: push.previousDeadLetterTopic === group.deadLetterTopic ? undefined : push.previousDeadLetterTopic };
    return this.putGroupWithTopics(group.name, update, subscribed, counts, deadLetter);
  }

  /**
   * Refuses, before anything is written, a group save whose transaction would change topic items
   * whose lists, as read now, may pass the bytes of one transaction (the arguments as
   * {@link putGroup} takes them); the transaction keeps the bound itself against lists grown since.
   * Reads nothing when the save changes few topic items (bounded-topic-updates.ts).
   */
  async refuseOversizedGroupSave(
    name: string,
    newlySubscribed: readonly string[],
    pushCounts: ReadonlyMap<string, number>,
    deadLetterTopic: string,
    previousDeadLetterTopic: string | undefined,
  ): Promise<void> {
    const counts = new Map([...pushCounts].filter(([, delta]) => delta !== 0));
    const previous = previousDeadLetterTopic === deadLetterTopic ? undefined : previousDeadLetterTopic;
    const topics = groupSaveTopics(newlySubscribed, counts, { topic: deadLetterTopic, previous });
    const bytes = await topicUpdatesBytes(this.doc, this.table, topics.map((topic) => ({ topic, adds: groupSaveAdds(topic, counts, deadLetterTopic) })));
    if (bytes > TRANSACTION_MAX_BYTES) throw topicItemsTooLarge('save', name, topics.length, bytes);
  }

  /**
   * The group write of a save that also changes topic items, in one
   * transaction: `ADD sv 1` on each standard topic it adds a subscription to,
   * conditional on the partition count (and generation) the save read and
   * created cursors for — a partition raise is conditional on `sv`, so the two
   * are serialized on the topic item: either the raise sees this group or this
   * save sees the new count (docs/design.md, Raising partitions) — and `pu ± 1` (and the group's name added to or deleted from `pg`)
   * on each topic that gains or loses this push group (never below 0). A topic
   * in both gets one update. A topic that gains the group must count fewer
   * than `PushLimits.pushGroupsPerTopicMax` push groups (`pu < :max`, so `pg`
   * stays bounded): a topic at the maximum fails the save with
   * {@link TooManyPushGroupsError}, told by the topic's old image that the
   * failed condition returns (no read). Undefined when another condition
   * failed or the transaction met a concurrent one (the caller reads and
   * decides again).
   *
   * The group's dead-letter topic gets the group's name added to `dg` (the
   * groups that name it as their dead-letter topic), conditional on the topic
   * being live and standard; a topic the group named before loses it. A topic
   * becomes FIFO only without `dg` ({@link putTopic}): both writes are on the
   * topic item, so a group save and a FIFO topic PUT racing each other cannot
   * both pass (docs/design.md, "The dead-letter topic ... must stay one").
   */
  private async putGroupWithTopics(
    name: string,
    update: { TableName: string; Key: Record<string, unknown>; UpdateExpression: string; ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> },
    subscribed: readonly Topic[],
    pushCounts: ReadonlyMap<string, number>,
    deadLetter: { topic: string; previous: string | undefined },
  ): Promise<Group | undefined> {
    const bySv = new Map(subscribed.map((topic) => [topic.name, topic]));
    const keys = groupSaveTopics(bySv.keys(), pushCounts, deadLetter);
    const plans = keys.map((topicName) => {
      const topic = bySv.get(topicName);
      const delta = pushCounts.get(topicName) ?? 0;
      const conditions = ['attribute_exists(pk)'];
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const set: string[] = [];
      const add: string[] = [];
      const remove: string[] = [];
      if (delta !== 0) {
        // A count never goes below 0, even for topics saved before `pu` existed; `pg` names the groups counted.
        set.push('pu = if_not_exists(pu, :zero) + :d');
        Object.assign(values, { ':zero': 0, ':d': delta, ':pg': new Set([name]) });
        (delta > 0 ? add : remove).push('pg :pg');
        if (delta < 0) {
          conditions.push('pu >= :one');
          values[':one'] = 1;
        } else {
          conditions.push('(attribute_not_exists(pu) OR pu < :maxPush)');
          values[':maxPush'] = PushLimits.pushGroupsPerTopicMax;
        }
      }
      if (topic) {
        add.push('sv :svOne');
        conditions.push('deleted <> :true', '#generation = :gen', '#partitions = :p');
        Object.assign(names, { '#generation': 'generation', '#partitions': 'partitions' });
        Object.assign(values, { ':svOne': 1, ':true': true, ':gen': topic.generation, ':p': topic.partitions });
      }
      const namesDeadLetter = topicName === deadLetter.topic;
      if (namesDeadLetter) {
        // Live and standard, and bounded: a group joins `dg` only while fewer than the most name the topic (or it is one of them).
        add.push('dg :dg');
        conditions.push('deleted <> :true', '#type = :standard', '(attribute_not_exists(dg) OR size(dg) < :maxDg OR contains(dg, :name))');
        names['#type'] = 'type';
        Object.assign(values, { ':dg': new Set([name]), ':true': true, ':standard': 'standard', ':maxDg': Limits.deadLetterGroupsPerTopicMax, ':name': name });
      } else if (topicName === deadLetter.previous) {
        remove.push('dg :dg');
        values[':dg'] = new Set([name]);
      }
      const clauses = [set.length > 0 ? `SET ${set.join(', ')}` : '', add.length > 0 ? `ADD ${add.join(', ')}` : '', remove.length > 0 ? `DELETE ${remove.join(', ')}` : ''];
      // Only the name taken out of the dead-letter topic named before: nothing else needs that item.
      const unnamingOnly = topicName === deadLetter.previous && !topic && delta === 0;
      return {
        topicName,
        gainsPush: delta > 0,
        namesDeadLetter,
        unnamingOnly,
        item: {
          Update: {
            TableName: this.table,
            Key: { pk: TOPIC_PK, sk: topicName },
            UpdateExpression: clauses.filter(Boolean).join(' '),
            ConditionExpression: conditions.join(' AND '),
            ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: values,
            // The old image tells a full topic from a race, and a missing item from a changed one.
            ...(delta > 0 || namesDeadLetter || unnamingOnly ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
          },
        },
      };
    });
    // The update that only takes the name out of the dead-letter topic named before goes last: it may be left out.
    const sent = [...plans.filter((plan) => !plan.unnamingOnly), ...plans.filter((plan) => plan.unnamingOnly)];
    // Within the 4 MB of one transaction by construction: many topic items are read and pinned (before any write).
    await boundTopicUpdates(
      this.doc,
      this.table,
      sent.map((plan) => ({ topic: plan.topicName, update: plan.item.Update, adds: groupSaveAdds(plan.topicName, pushCounts, deadLetter.topic) })),
      (bytes) => topicItemsTooLarge('save', name, sent.length, bytes),
    );
    try {
      await this.transactUnlessLastMissing([{ Update: update }, ...sent.map((p) => p.item)], sent.at(-1)?.unnamingOnly === true);
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons === undefined) throw error;
      const failed = sent.map((plan, i) => ({ plan, old: failedImage(error, 1 + i) }));
      const full = failed.find(({ plan, old }) => plan.gainsPush && old && old.deleted !== true && Number(old.pu ?? 0) >= PushLimits.pushGroupsPerTopicMax);
      if (full) throw new TooManyPushGroupsError(full.plan.topicName, PushLimits.pushGroupsPerTopicMax);
      if (failed.some(({ plan, old }) => plan.namesDeadLetter && old && deadLetterIsFull(old, name))) throw new TooManyDeadLetterGroupsError(deadLetter.topic, Limits.deadLetterGroupsPerTopicMax);
      if (reasons.some((code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict')) {
        // The dead-letter topic may have changed (deleted, or created FIFO): the next try reads it.
        this.topicCache.delete(deadLetter.topic);
        return undefined;
      }
      throw error;
    }
    for (const topicName of keys) this.topicCache.delete(topicName);
    const { group } = await this.groupRecord(name);
    if (group) this.remember(this.groupCache, group.name, group);
    return group;
  }

  /**
   * Sends a transaction whose last item, when `lastOptional`, takes a group's name out of a topic item
   * that may not exist (topic items are never removed, but a table restored in part or edited by hand
   * may lack one): cancelled because that item is missing (its condition failed on no item, told by
   * the empty old image), it is sent once more without it — there is no name to take out. Throws
   * what the last try threw.
   */
  private async transactUnlessLastMissing(items: NonNullable<TransactWriteCommandInput['TransactItems']>, lastOptional: boolean): Promise<void> {
    const send = (transact: typeof items) => call(() => this.doc.send(new TransactWriteCommand({ TransactItems: transact })));
    try {
      await send(items);
    } catch (error) {
      if (!lastOptional || cancellationReasons(error) === undefined || failedImage(error, items.length - 1) !== null) throw error;
      await send(items.slice(0, -1));
    }
  }

  /**
   * Replaces a push group's signing secret; the old one signs along until
   * `previousUntil`. Conditional on the secret it replaces (false: rotated
   * concurrently, or the group is gone).
   */
  async rotatePushSecret(name: string, expectSealed: string, sealed: string, previousUntil: number, now: number, previous: string = expectSealed): Promise<boolean> {
    this.groupCache.delete(name);
    const result = await conditionalWithImage(this.doc, {
      TableName: this.table,
      Key: { pk: GROUP_PK, sk: name },
      UpdateExpression: 'SET ps = :new, pp = :prev, ppu = :until, psa = :now',
      ConditionExpression: 'attribute_not_exists(deleted) AND ps = :old',
      ExpressionAttributeValues: { ':new': sealed, ':old': expectSealed, ':prev': previous, ':until': previousUntil, ':now': now },
    });
    // The SDK's retry of this rotation, which had landed (its answer lost), meets its own new
    // secret: it took effect (taken for a lost race, the caller rotated again and the secret the
    // user held stopped signing at once).
    return result.ok || (result.old !== undefined && result.old.deleted === undefined && result.old.ps === sealed);
  }

  /**
   * Marks a group deleted (a tombstone that expires by TTL a day after the
   * re-create window); 404 when there is no live group of that name. With
   * `expect` (the version read and its push topics, if a push group), the
   * delete is conditional on that version and each push topic's `pu` is
   * lowered in the same transaction, and the group's name is taken out of its
   * dead-letter topic's `dg` (given `deadLetterTopic`); false when the group
   * changed meanwhile (read again and retry).
   */
  async deleteGroup(name: string, now: number, expect?: { version: number; topics: readonly string[]; deadLetterTopic?: string | undefined }): Promise<boolean> {
    this.groupCache.delete(name);
    const tombstone = {
      TableName: this.table,
      Key: { pk: GROUP_PK, sk: name },
      // A try token (try-token.ts): the SDK's retry of this delete, which had landed (its answer
      // lost), passes on its own tombstone, where the caller read the group again and answered 404
      // for a delete that took effect. 8 bytes on the tombstone (a re-create removes them).
      UpdateExpression: `SET deleted = :true, updatedAt = :now, #ttl = :ttl, ${TRY_TOKEN} = :tk`,
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted)',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':true': true,
        ':now': now,
        ':ttl': Math.ceil((now + this.recreateAfterMs) / 1000) + GROUP_TOMBSTONE_TTL_SECONDS,
        ':tk': newTryToken(),
      } as Record<string, unknown>,
    };
    if (expect) {
      tombstone.ConditionExpression += expect.version === 0 ? ' AND attribute_not_exists(v)' : ' AND v = :v';
      if (expect.version !== 0) tombstone.ExpressionAttributeValues[':v'] = expect.version;
    }
    tombstone.ConditionExpression = `(${tombstone.ConditionExpression}) OR ${TRY_TOKEN} = :tk`;
    if (!expect || (expect.topics.length === 0 && expect.deadLetterTopic === undefined)) {
      try {
        await call(() => this.doc.send(new UpdateCommand(tombstone)));
        return true;
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        if (expect) return false;
        throw new GroupNotFoundError(name);
      }
    }
    const push = expect;
    const pushUpdates = [...new Set(push.topics)].map((topic) => ({
      Update: {
        TableName: this.table,
        Key: { pk: TOPIC_PK, sk: topic },
        UpdateExpression: 'SET pu = pu - :one DELETE pg :pg',
        ConditionExpression: 'attribute_exists(pk) AND pu >= :one',
        ExpressionAttributeValues: { ':one': 1, ':pg': new Set([name]) },
      },
    }));
    // The group no longer names its dead-letter topic: it may become FIFO again (putTopic). A group
    // never subscribes to its dead-letter topic, so it is not one of the push topics.
    const unnaming = push.deadLetterTopic === undefined ? [] : [deadLetterUnnaming(this.table, name, push.deadLetterTopic)];
    const topicUpdates = [...pushUpdates, ...unnaming];
    await boundTopicUpdates(
      this.doc,
      this.table,
      topicUpdates.map(({ Update }) => ({ topic: String(Update.Key.sk), update: Update, adds: {} })),
      (bytes) => topicItemsTooLarge('delete', name, topicUpdates.length, bytes),
    );
    try {
      await this.transactUnlessLastMissing([{ Update: tombstone }, ...pushUpdates, ...unnaming], unnaming.length > 0);
    } catch (error) {
      const reasons = cancellationReasons(error);
      // The group changed, or a concurrent write met one of these items: the caller reads again.
      if (reasons?.some((code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict')) return false;
      throw error;
    }
    for (const topic of [...push.topics, ...(push.deadLetterTopic === undefined ? [] : [push.deadLetterTopic])]) this.topicCache.delete(topic);
    return true;
  }

  /** Groups by name, deleted ones left out; `admit` may end the page early (see `list`). */
  async listGroups(limit: number, token: string | undefined, admit?: (group: Group) => boolean): Promise<Page<Group>> {
    return this.list(GROUP_PK, limit, token, (item) => (item.deleted === true ? undefined : toGroup(item)), admit);
  }

  /** Every group (admin paths only: stats and message query need the subscribers of a topic). */
  async allGroups(): Promise<Group[]> {
    const out: Group[] = [];
    let token: string | undefined;
    do {
      const page = await this.listGroups(100, token);
      out.push(...page.items);
      token = page.nextToken;
    } while (token !== undefined);
    return out;
  }

  /**
   * A page of one collection. `admit` is asked before each item joins the
   * page (the caller's answer budget); a refusal ends the page there, with a
   * token that resumes at the refused item. The first item always joins.
   */
  private async list<T>(
    pk: string,
    limit: number,
    token: string | undefined,
    map: (item: Record<string, unknown>) => T | undefined,
    admit: (item: T) => boolean = () => true,
  ): Promise<Page<T>> {
    const start = decodePageToken(token, pk);
    const items: T[] = [];
    let key = start;
    let queries = 0;
    // Deleted topics and groups are filtered out after the read (topic tombstones never expire):
    // each Query reads at least LIST_READ_MIN items and a page makes at most LIST_QUERIES_MAX of
    // them, so a page over many tombstones may come back short, or empty, with a nextToken.
    do {
      const result = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': pk },
            Limit: Math.max(limit - items.length, LIST_READ_MIN),
            ExclusiveStartKey: key,
            ConsistentRead: true,
          }),
        ),
      );
      queries++;
      for (const item of result.Items ?? []) {
        const mapped = map(item);
        if (mapped !== undefined) {
          // Full, or refused by the budget: the page ends here and the token resumes at this item.
          if (items.length >= limit || (items.length > 0 && !admit(mapped))) return { items, nextToken: encodeToken(key) };
          items.push(mapped);
        }
        key = { pk: item.pk, sk: item.sk };
      }
      key = result.LastEvaluatedKey;
    } while (key !== undefined && items.length < limit && queries < LIST_QUERIES_MAX);
    return { items, nextToken: encodeToken(key) };
  }

}
