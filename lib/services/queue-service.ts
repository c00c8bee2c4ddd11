/**
 * The queue engine: send, receive, visibility, commit and message queries.
 * Admin (topics, groups, stats) lives in admin-service.ts.
 */
import {
  ConflictError,
  GroupNotFoundError,
  ProducerGroupNotFoundError,
  InvalidArgumentError,
  MessageNotFoundError,
  SluiceError,
  ThrottledError,
  TopicNotFoundError,
} from '../domain/errors.js';
import {
  GroupDeliveryState,
  Limits,
  iso,
  type DeliveredMessage,
  type Group,
  type MessageRecord,
  type SendInput,
  type SendResult,
  type Topic,
} from '../domain/model.js';
import { decodeReceipt, directMessageId, parseDirectMessageId, streamId } from '../domain/streams.js';
import { tagMatches, type CursorState } from '../domain/cursor.js';
import type { Clock } from '../ports/clock.js';
import type { Random } from '../ports/random.js';
import type { Notifier } from '../ports/notifier.js';
import type { Timers } from '../ports/timers.js';
import type { Deferred } from '../adapters/dynamodb/deferred.js';
import type { Notice } from '../adapters/dynamodb/stream-log.js';
import { ItemConditionFailedError, WriteBatch, type TransactItem } from '../adapters/dynamodb/write-batch.js';
import { WritePlanner, bodyBytes, type Landed, type Outgoing } from './write-planner.js';
import { Committer, receiptAt, type CommitEntry, type CommitResult } from './committer.js';
import { Receiver } from './receiver.js';
import type { Stores } from './stores.js';

export type { Stores } from './stores.js';
export type { CommitEntry, CommitResult, PublishInput } from './committer.js';

export interface QueueServiceOptions {
  /** How often a long poll looks again when nothing wakes it (ms). */
  pollIntervalMs?: number;
}

export type BatchResult = { index: number; result: SendResult } | { index: number; error: SluiceError };

export interface ReceiveRequest {
  maxMessages: number;
  visibilityTimeoutSeconds?: number | undefined;
  waitSeconds: number;
  topics?: string[] | undefined;
  /** Time (ms) by which the call must answer; the long poll and the claims stop before it. */
  answerBy?: number | undefined;
}

/** Largest segment we write; DynamoDB items stop at 400 KB. */
const SEGMENT_MAX_BYTES = 350 * 1024;
/** Side items per transaction (DynamoDB allows 100 items, the segment and sentinel take two). */
const SEGMENT_MAX_EXTRAS = 90;

/** Names of the items written with a message (write-batch.ts): a failed condition names its item. */
const DEFERRED_ITEM = 'deferred';
const dedupItem = (entry: { index: number }) => `dedup:${entry.index}`;
const keyItem = (entry: { index: number }, key: number) => `key:${entry.index}:${key}`;
/** The name of a deferred item's update in a write batch. */
const deferredUpdateItem = (d: Deferred) => `deferred:${d.id}`;

/** A notice written again for a message a dedup hit found already in its FIFO shard. */
interface Reannounce {
  stream: string;
  notice: Notice;
  ttl: number;
}

interface Prepared extends Outgoing {
  index: number;
  bytes: number;
}

export class QueueService {
  private readonly pollIntervalMs: number;
  private readonly planner: WritePlanner;
  private readonly receiver: Receiver;
  private readonly committer: Committer;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    random: Random,
    private readonly notifier: Notifier,
    private readonly timers: Timers,
    options: QueueServiceOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.planner = new WritePlanner(clock, random);
    this.receiver = new Receiver(stores, clock, random, notifier);
    this.committer = new Committer(stores, clock, notifier, this.planner);
    this.random = random;
  }

  private readonly random: Random;

  // ── send ──────────────────────────────────────────────────────────────

  async send(topicName: string, input: SendInput): Promise<SendResult> {
    const [outcome] = await this.sendBatch(topicName, [input]);
    if (!outcome) throw new Error('send produced no result');
    if ('error' in outcome) throw outcome.error;
    return outcome.result;
  }

  /**
   * Sends entries to one topic. Entries of one stream are appended in array
   * order, in as few segments as fit; each entry gets its own result or error.
   * FIFO shards are announced by notices written after their segments.
   */
  async sendBatch(topicName: string, inputs: SendInput[]): Promise<BatchResult[]> {
    const topic = await this.requireTopic(topicName);
    const results: BatchResult[] = [];
    const byStream = new Map<string, Prepared[]>();
    const partition = Math.floor(this.random.fraction() * topic.partitions);
    const scheduled: Prepared[] = [];
    const halves: Prepared[] = [];
    inputs.forEach((input, index) => {
      try {
        const path = inputs.length > 1 ? `entries/${index}` : '';
        const routed = this.planner.route(topic, input, partition, path);
        if (input.transaction !== undefined) {
          if (input.delaySeconds !== undefined || input.deliverAt !== undefined) {
            throw new InvalidArgumentError('A transactional message cannot also be scheduled: it becomes deliverable when committed.', {
              issues: [{ path: path ? `${path}/transaction` : 'transaction', message: 'not allowed with delaySeconds or deliverAt' }],
            });
          }
          halves.push({ ...routed, index, bytes: 0 });
          return;
        }
        if (routed.dueAt !== undefined) {
          scheduled.push({ ...routed, index, bytes: 0 });
          return;
        }
        const key = streamId(topic, routed.local);
        byStream.set(key, [...(byStream.get(key) ?? []), { ...routed, index, bytes: bodyBytes(input.body, input.encoding) }]);
      } catch (error) {
        if (!(error instanceof SluiceError)) throw error;
        results.push({ index, error });
      }
    });
    const seenDedup = new Map<string, number>();
    const landed: Landed[] = [];
    const reannounce: Reannounce[] = [];
    for (const entry of scheduled) results.push(await this.schedule(topic, entry));
    for (const entry of halves) {
      try {
        results.push(await this.prepareHalf(topic, entry));
      } catch (error) {
        if (!(error instanceof SluiceError)) throw error;
        results.push({ index: entry.index, error });
      }
    }
    await Promise.all(
      [...byStream.entries()].map(async ([stream, entries]) => {
        for (const chunk of this.chunks(entries)) {
          const appended = await this.appendChunk(topic, stream, chunk, seenDedup);
          results.push(...appended.results);
          landed.push(...appended.landed);
          reannounce.push(...appended.reannounce);
        }
      }),
    );
    // Written after the segments: a notice never announces a message that does not exist.
    // Dedup hits re-announce their originals in the same notice segments (one append per notice stream, not per entry).
    const notices = WritePlanner.notices(landed);
    for (const { stream, notice, ttl } of reannounce) {
      const entry = notices.get(stream) ?? { notices: [], ttl: 0 };
      entry.notices.push(notice);
      entry.ttl = Math.max(entry.ttl, ttl);
      notices.set(stream, entry);
    }
    await Promise.all([...notices].map(([stream, { notices, ttl }]) => this.stores.log.appendNotices(stream, notices, ttl)));
    this.notifier.notify(topic.name);
    return results.sort((a, b) => a.index - b.index);
  }

  private *chunks(entries: Prepared[]): Generator<Prepared[]> {
    let chunk: Prepared[] = [];
    let bytes = 0;
    let extras = 0;
    for (const entry of entries) {
      const size = entry.bytes + 512 + JSON.stringify(entry.input.properties).length + entry.input.keys.join('').length;
      const extra = entry.input.keys.length + (entry.input.dedupId === undefined ? 0 : 1);
      if (chunk.length > 0 && (bytes + size > SEGMENT_MAX_BYTES || extras + extra > SEGMENT_MAX_EXTRAS)) {
        yield chunk;
        chunk = [];
        bytes = 0;
        extras = 0;
      }
      chunk.push(entry);
      bytes += size;
      extras += extra;
    }
    if (chunk.length > 0) yield chunk;
  }

  private async appendChunk(
    topic: Topic,
    stream: string,
    chunk: Prepared[],
    seenDedup: Map<string, number>,
  ): Promise<{ results: BatchResult[]; landed: Landed[]; reannounce: Reannounce[] }> {
    const out: BatchResult[] = [];
    const landed: Landed[] = [];
    const reannounce: Reannounce[] = [];
    // A dedup id repeated inside one batch answers with the first entry's result.
    const repeats: Prepared[] = [];
    let pending = chunk.filter((entry) => {
      const id = entry.input.dedupId;
      if (id === undefined) return true;
      if (seenDedup.has(id)) {
        repeats.push(entry);
        return false;
      }
      seenDedup.set(id, entry.index);
      return true;
    });
    while (pending.length > 0) {
      const now = this.clock.now();
      try {
        const { seq, records } = await this.stores.log.append(stream, (first) => {
          const extras = new WriteBatch();
          const records = pending.map((entry, i) => {
            const record = this.planner.record(topic, entry.input, directMessageId(entry.local, first + i), now);
            if (entry.input.dedupId !== undefined) {
              extras.add(
                dedupItem(entry),
                this.stores.markers.dedupItem(topic.name, entry.input.dedupId, sendResult(topic, record, first + i), now, Limits.dedupWindowSeconds),
              );
            }
            entry.input.keys.forEach((key, j) =>
              extras.add(keyItem(entry, j), this.stores.markers.keyItem(topic.name, key, record.messageId, record.deliverableAt, record.expiresAt)),
            );
            return record;
          });
          return { records, extras };
        });
        pending.forEach((entry, i) => out.push({ index: entry.index, result: sendResult(topic, records[i]!, seq + i) }));
        const first = pending[0]!;
        landed.push({ topic, local: first.local, stream, firstSeq: seq, records });
        pending = [];
      } catch (error) {
        if (!(error instanceof ItemConditionFailedError)) {
          if (error instanceof SluiceError) {
            for (const entry of pending) out.push({ index: entry.index, error });
            pending = [];
            break;
          }
          throw error;
        }
        // A dedup hit: the entry whose marker failed was sent before.
        const owner = pending.find((entry) => dedupItem(entry) === error.item);
        if (!owner || owner.input.dedupId === undefined) throw error;
        const original = await this.stores.markers.dedupResult(topic.name, owner.input.dedupId, now);
        if (original) {
          out.push({ index: owner.index, result: original });
          pending = pending.filter((entry) => entry !== owner);
          // Re-announce the original: its first send may have died before writing its notice.
          if (owner.local.kind === 'shard' && original.sequence !== undefined) {
            const { stream: noticeStream, notice } = WritePlanner.noticeFor(topic, owner.local.shardKey, original.sequence);
            reannounce.push({ stream: noticeStream, notice, ttl: Math.ceil(now / 1000) + topic.retentionSeconds });
          }
        }
      }
    }
    for (const repeat of repeats) {
      const first = out.find((r) => r.index === seenDedup.get(repeat.input.dedupId ?? ''));
      if (first && 'result' in first) out.push({ index: repeat.index, result: first.result });
      else {
        const original = await this.stores.markers.dedupResult(topic.name, repeat.input.dedupId ?? '', this.clock.now());
        if (original) out.push({ index: repeat.index, result: original });
        else if (first && 'error' in first) out.push({ index: repeat.index, error: first.error });
      }
    }
    return { results: out, landed, reannounce };
  }

  /**
   * A scheduled message waits as a deferred item (with its dedup marker and
   * key index entries, atomically) until its timer releases it.
   */
  private async schedule(topic: Topic, entry: Prepared): Promise<BatchResult> {
    const now = this.clock.now();
    const dueAt = entry.dueAt ?? now;
    const id = this.random.id();
    const messageId = `${DEFERRED_PREFIX}${id}`;
    const record = {
      ...this.planner.record(topic, entry.input, messageId, now),
      deliverableAt: dueAt,
      expiresAt: dueAt + topic.retentionSeconds * 1000,
    };
    const result: SendResult = { messageId, state: 'scheduled', deliverAt: iso(dueAt) };
    const original = await this.storeDeferred(topic, entry, this.stores.deferred.scheduleItem(id, record, dueAt, topic.retentionSeconds), result, record, now);
    // A dedup hit re-arms too: the first attempt may have died before arming its timer.
    const stored = original ?? result;
    if (stored.state === 'scheduled' && stored.deliverAt) await this.timers.arm(Date.parse(stored.deliverAt));
    return { index: entry.index, result: stored };
  }

  /**
   * Writes a deferred item with its dedup marker and key index entries
   * (atomically when there are any). Returns the original result on a dedup hit.
   */
  private async storeDeferred(
    topic: Topic,
    entry: Prepared,
    item: TransactItem,
    result: SendResult,
    record: MessageRecord,
    now: number,
  ): Promise<SendResult | undefined> {
    const batch = new WriteBatch().add(DEFERRED_ITEM, item);
    if (entry.input.dedupId !== undefined) {
      batch.add(dedupItem(entry), this.stores.markers.dedupItem(topic.name, entry.input.dedupId, result, now, Limits.dedupWindowSeconds));
    }
    entry.input.keys.forEach((key, j) =>
      batch.add(keyItem(entry, j), this.stores.markers.keyItem(topic.name, key, record.messageId, record.deliverableAt, record.expiresAt)),
    );
    try {
      await this.stores.writer.write(batch);
      return undefined;
    } catch (error) {
      if (!(error instanceof ItemConditionFailedError) || error.item !== dedupItem(entry) || entry.input.dedupId === undefined) throw error;
      const original = await this.stores.markers.dedupResult(topic.name, entry.input.dedupId, now);
      if (!original) throw new ThrottledError('A concurrent send with the same dedupId is in progress; retry.');
      return original;
    }
  }

  /**
   * A transactional send stores a half message (`prepared`): invisible to
   * consumers until its transaction commits (SPEC §4).
   */
  private async prepareHalf(topic: Topic, entry: Prepared): Promise<BatchResult> {
    const transaction = entry.input.transaction!;
    const producer = await this.stores.producers.get(transaction.producerGroup);
    if (!producer) throw new ProducerGroupNotFoundError(transaction.producerGroup);
    const now = this.clock.now();
    const id = this.random.id();
    const messageId = `${DEFERRED_PREFIX}${id}`;
    const record = this.planner.record(topic, entry.input, messageId, now);
    const result: SendResult = { messageId, state: 'prepared', transactionId: `t${id}` };
    const checkAfter = transaction.checkAfterSeconds ?? Limits.checkAfterDefaultSeconds;
    const item = this.stores.deferred.prepareItem(id, record, producer.name, checkAfter, now, topic.retentionSeconds);
    const original = await this.storeDeferred(topic, entry, item, result, record, now);
    return { index: entry.index, result: original ?? result };
  }

  /**
   * Releases scheduled messages that are due: each enters its stream now,
   * behind what accumulated before it. Appending and marking released are one
   * transaction, so a timer fired twice releases once. Returns how many it released.
   */
  async releaseDeferred(ids: string[]): Promise<number> {
    const now = this.clock.now();
    const due = (await Promise.all(ids.map((id) => this.stores.deferred.get(id)))).filter(
      (d): d is Deferred => d !== undefined && d.state === 'scheduled' && d.dueAt <= now,
    );
    const appended = await this.appendDeferred(due, (d, address) => this.stores.deferred.releaseItem(d.id, address));
    return [...appended.values()].filter((a) => a !== undefined).length;
  }

  /**
   * Appends waiting messages to their streams, each with the update that
   * records it appended (released, committed), in transactions of up to 10.
   * A message whose update fails its condition (resolved meanwhile) is left
   * out. Returns where each appended message landed; a message of a deleted
   * topic is dropped (as a send to a deleted topic would be).
   */
  async appendDeferred(
    items: Deferred[],
    update: (d: Deferred, address: { stream: string; seq: number }) => TransactItem,
  ): Promise<Map<string, { stream: string; seq: number } | undefined>> {
    const now = this.clock.now();
    const out = new Map<string, { stream: string; seq: number } | undefined>();
    const topics = await this.stores.catalog.topics(items.map((d) => d.topic));
    for (let i = 0; i < items.length; i += 10) {
      let pending = items.slice(i, i + 10);
      while (pending.length > 0) {
        const live: Array<{ deferred: Deferred; outgoing: Outgoing }> = [];
        for (const d of pending) {
          const topic = topics.get(d.topic);
          if (!topic || topic.generation !== d.record.generation) {
            if (d.state === 'scheduled') await this.stores.deferred.cancel(d.id, d.topic); // its topic was deleted meanwhile
            out.set(d.id, undefined);
            continue;
          }
          const outgoing = this.planner.route(topic, inputOf(d.record));
          live.push({ deferred: d, outgoing: { ...outgoing, messageId: d.record.messageId, sentAt: d.record.sentAt } });
        }
        if (live.length === 0) break;
        const { writes, landed } = this.planner.writes(live.map((l) => l.outgoing), now, true);
        const addresses = new Map<string, { stream: string; seq: number }>();
        try {
          await this.stores.log.appendMany(writes, (seqs) => {
            addresses.clear();
            for (const group of landed(seqs)) {
              group.records.forEach((r, j) => addresses.set(r.messageId, { stream: group.stream, seq: group.firstSeq + j }));
            }
            const batch = new WriteBatch();
            for (const l of live) batch.add(deferredUpdateItem(l.deferred), update(l.deferred, addresses.get(l.deferred.record.messageId) ?? { stream: '', seq: 0 }));
            return batch;
          });
        } catch (error) {
          if (!(error instanceof ItemConditionFailedError)) throw error;
          const gone = live.find((l) => deferredUpdateItem(l.deferred) === error.item)?.deferred;
          if (gone) out.set(gone.id, undefined);
          pending = pending.filter((d) => d !== gone); // resolved meanwhile
          continue;
        }
        for (const l of live) out.set(l.deferred.id, addresses.get(l.deferred.record.messageId));
        for (const topic of new Set(live.map((l) => l.outgoing.topic.name))) this.notifier.notify(topic);
        pending = [];
      }
    }
    return out;
  }

  /** Cancels a message that is still scheduled. */
  async cancel(topicName: string, messageId: string): Promise<void> {
    const topic = await this.requireTopic(topicName);
    const notFound = () => new MessageNotFoundError(`Message '${messageId}' was not found in topic '${topic.name}'.`);
    if (!isDeferredId(messageId)) {
      if (await this.findRecord(topic, messageId)) {
        throw new ConflictError(`Message '${messageId}' is already deliverable; only scheduled messages can be cancelled.`);
      }
      throw notFound();
    }
    const outcome = await this.stores.deferred.cancel(messageId.slice(1), topic.name);
    if (outcome === undefined) throw notFound();
    if (!outcome.done) {
      const state = outcome.state === 'released' ? 'already deliverable' : outcome.state;
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
   * request is checked before the commits write anything, so bad input
   * changes nothing; then the handles are committed (plain commits, each with
   * its own result) and the receive runs.
   */
  async commitAndReceive(
    groupName: string,
    receiptHandles: string[],
    request: ReceiveRequest,
  ): Promise<{ commitResults: CommitResult[]; messages: DeliveredMessage[] }> {
    receiptHandles.forEach((handle, i) => receiptAt(handle, `commit/${i}`));
    this.subscribedTopics(await this.requireGroup(groupName), request.topics);
    const commitResults = await this.commit(groupName, receiptHandles);
    return { commitResults, messages: await this.receive(groupName, request) };
  }

  async receive(groupName: string, request: ReceiveRequest): Promise<DeliveredMessage[]> {
    const group = await this.requireGroup(groupName);
    const subscribed = this.subscribedTopics(group, request.topics);
    const requested = new Set(request.topics ?? subscribed);
    const visibilityMs = (request.visibilityTimeoutSeconds ?? group.visibilityTimeoutSeconds) * 1000;
    const answerBy = request.answerBy ?? Infinity;
    const deadline = Math.min(this.clock.now() + request.waitSeconds * 1000, answerBy);
    for (;;) {
      const mark = this.notifier.mark();
      const topics = await this.stores.catalog.topics([...subscribed]);
      const messages = await this.receiver.receiveOnce(
        {
          group,
          topics,
          requested,
          visibilityMs,
          deadline: answerBy,
          cascade: (g, stream) => this.committer.completeProtected(g, stream, []).then(() => undefined),
        },
        request.maxMessages,
      );
      const now = this.clock.now();
      if (messages.length > 0 || now >= deadline) return messages;
      await this.notifier.wait([...requested], Math.min(this.pollIntervalMs, deadline - now), mark);
    }
  }

  // ── visibility and commit ─────────────────────────────────────────────

  async changeVisibility(groupName: string, receiptHandle: string, visibilityTimeoutSeconds: number): Promise<void> {
    decodeReceipt(receiptHandle);
    await this.committer.changeVisibility(await this.requireGroup(groupName), receiptHandle, visibilityTimeoutSeconds);
  }

  /** Commits receipt handles; each entry may publish messages atomically with its commit. */
  async commit(groupName: string, entries: Array<CommitEntry | string>): Promise<CommitResult[]> {
    const normalized = entries.map((e) => (typeof e === 'string' ? { receiptHandle: e, publish: [] } : e));
    const group = await this.requireGroup(groupName);
    return this.committer.commit(group, normalized);
  }

  // ── queries ───────────────────────────────────────────────────────────

  async getMessage(topicName: string, messageId: string) {
    const topic = await this.requireTopic(topicName);
    const found = await this.findRecord(topic, messageId);
    if (!found) throw new MessageNotFoundError(`Message '${messageId}' was not found in topic '${topic.name}' (it may have expired).`);
    const { record, stream, seq } = found;
    if (stream === undefined || seq === undefined) return { ...this.describe(topic, found), groups: [] };
    const groups = (await this.stores.catalog.allGroups()).filter((g) => g.subscriptions.some((s) => s.topic === topic.name));
    const deliveries = await Promise.all(
      groups.map(async (group) => {
        const cursor = await this.stores.cursors.get(group.name, stream);
        const tags = group.subscriptions.find((s) => s.topic === topic.name)?.tags;
        return { group: group.name, ...groupState(cursor, seq, tagMatches(tags, record.tag), record.sentAt < group.createdAt) };
      }),
    );
    return { ...this.describe(topic, found), groups: deliveries };
  }

  async messagesByKey(topicName: string, key: string, limit: number, nextToken: string | undefined) {
    const topic = await this.requireTopic(topicName);
    const page = await this.stores.markers.byKey(topic.name, key, limit, nextToken);
    const messages = [];
    for (const messageId of page.messageIds) {
      const found = await this.findRecord(topic, messageId);
      if (found) messages.push(this.describe(topic, found));
    }
    return { messages, nextToken: page.nextToken };
  }

  private describe(topic: Topic, { record, seq, state }: Found) {
    return {
      messageId: record.messageId,
      topic: record.topic,
      state,
      body: record.body,
      encoding: record.encoding,
      tag: record.tag ?? null,
      keys: record.keys,
      properties: record.properties,
      shardKey: record.shardKey ?? null,
      sequence: topic.type === 'fifo' && seq !== undefined ? seq : null,
      sentAt: iso(record.sentAt),
      deliverableAt: iso(record.deliverableAt),
      ...(state === 'scheduled' || state === 'cancelled' ? { deliverAt: iso(record.deliverableAt) } : {}),
      expiresAt: iso(record.expiresAt),
    };
  }

  private async findRecord(topic: Topic, messageId: string): Promise<Found | undefined> {
    if (isDeferredId(messageId)) {
      const deferred = await this.stores.deferred.get(messageId.slice(1));
      if (!deferred || deferred.topic !== topic.name || deferred.record.generation !== topic.generation) return undefined;
      if ((deferred.state === 'released' || deferred.state === 'committed') && deferred.address) {
        const segment = await this.stores.log.segmentContaining(deferred.address.stream, deferred.address.seq);
        const record = segment?.records[deferred.address.seq - segment.seq];
        if (!record || record.messageId !== messageId || record.expiresAt <= this.clock.now()) return undefined;
        return { record, stream: deferred.address.stream, seq: deferred.address.seq, state: 'deliverable' };
      }
      const waiting = deferred.state === 'released' || deferred.state === 'committed' ? 'scheduled' : deferred.state;
      return { record: deferred.record, stream: undefined, seq: undefined, state: waiting };
    }
    const address = parseDirectMessageId(messageId);
    if (!address) return undefined;
    if ((topic.type === 'fifo') !== (address.local.kind === 'shard')) return undefined;
    if (address.local.kind === 'partition' && address.local.partition >= topic.partitions) return undefined;
    const stream = streamId(topic, address.local);
    const segment = await this.stores.log.segmentContaining(stream, address.seq);
    const record = segment?.records[address.seq - segment.seq];
    const now = this.clock.now();
    if (!record || record.messageId !== messageId || record.topic !== topic.name) return undefined;
    if (record.generation !== topic.generation || record.expiresAt <= now) return undefined;
    return { record, stream, seq: address.seq, state: 'deliverable' };
  }

  // ── helpers ───────────────────────────────────────────────────────────

  async requireTopic(name: string): Promise<Topic> {
    const topic = await this.stores.catalog.topic(name);
    if (!topic) throw new TopicNotFoundError(name);
    return topic;
  }

  async requireGroup(name: string): Promise<Group> {
    const group = await this.stores.catalog.group(name);
    if (!group) throw new GroupNotFoundError(name);
    return group;
  }
}

/** Messages that wait before entering a stream (scheduled, transactional) have ids `d<ULID>`. */
const DEFERRED_PREFIX = 'd';
const isDeferredId = (messageId: string) => /^d[0-9A-HJKMNP-TV-Z]{26}$/.test(messageId);

interface Found {
  record: MessageRecord;
  stream: string | undefined;
  seq: number | undefined;
  state: 'deliverable' | 'scheduled' | 'cancelled' | 'prepared' | 'rolled-back';
}

const inputOf = (record: MessageRecord): SendInput => ({
  body: record.body,
  encoding: record.encoding,
  tag: record.tag,
  keys: record.keys,
  properties: record.properties,
  shardKey: record.shardKey,
  delaySeconds: undefined,
  deliverAt: undefined,
  dedupId: undefined,
});

const sendResult = (topic: Topic, record: MessageRecord, seq: number): SendResult => ({
  messageId: record.messageId,
  state: 'deliverable',
  ...(topic.type === 'fifo' ? { sequence: seq } : {}),
});

/** A message's state in one group, from that group's cursor on its stream. */
function groupState(cursor: CursorState | undefined, seq: number, matches: boolean, beforeSubscription: boolean) {
  const none = { deliveryCount: 0, committedAt: null as string | null };
  if (!matches) return { state: GroupDeliveryState.filtered, ...none };
  const lease = cursor?.leases.get(seq);
  if (lease) {
    return { state: lease.pending ? GroupDeliveryState.pending : GroupDeliveryState.inFlight, deliveryCount: lease.deliveries, committedAt: null };
  }
  const done = cursor?.done.get(seq);
  if (done) {
    return {
      state: done.outcome === 'committed' ? GroupDeliveryState.committed : done.outcome === 'dead-lettered' ? GroupDeliveryState.deadLettered : GroupDeliveryState.expired,
      deliveryCount: done.deliveries,
      committedAt: done.outcome === 'committed' ? iso(done.at) : null,
    };
  }
  if (!cursor || seq >= cursor.next) return { state: GroupDeliveryState.waiting, ...none };
  // Completed longer ago than the cursor remembers: committed (or dead-lettered), time no longer known.
  if (beforeSubscription) return { state: GroupDeliveryState.filtered, ...none };
  return { state: GroupDeliveryState.committed, deliveryCount: null, committedAt: null };
}
