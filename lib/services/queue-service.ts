/**
 * The queue engine: send, receive, visibility, commit and message queries.
 * Admin (topics, groups, stats) lives in admin-service.ts.
 */
import {
  GroupNotFoundError,
  InvalidArgumentError,
  MessageNotFoundError,
  PayloadTooLargeError,
  ReceiptHandleExpiredError,
  ShardKeyRequiredError,
  SluiceError,
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
import {
  decodeReceipt,
  directMessageId,
  encodeReceipt,
  parseDirectMessageId,
  streamId,
  type StreamLocal,
} from '../domain/streams.js';
import {
  doneToForget,
  expiredLeases,
  leaseToken,
  tagMatches,
  type CursorState,
  type DoneEntry,
  type Lease,
} from '../domain/cursor.js';
import type { Clock, Random } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Catalog } from '../adapters/dynamodb/catalog.js';
import type { CursorStore, ClaimChange } from '../adapters/dynamodb/cursors.js';
import type { Markers } from '../adapters/dynamodb/markers.js';
import { ExtraConditionFailedError, StreamLog, type Segment, type TransactItem } from '../adapters/dynamodb/stream-log.js';

export interface Stores {
  catalog: Catalog;
  log: StreamLog;
  cursors: CursorStore;
  markers: Markers;
}

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
}

export type CommitResult = { receiptHandle: string; status: 'committed' } | { receiptHandle: string; error: SluiceError };

/** Largest segment we write; DynamoDB items stop at 400 KB. */
const SEGMENT_MAX_BYTES = 350 * 1024;
/** Side items per transaction (DynamoDB allows 100 items, the segment and sentinel take two). */
const SEGMENT_MAX_EXTRAS = 90;

interface Prepared {
  index: number;
  input: SendInput;
  local: StreamLocal;
  bytes: number;
}

interface Candidate {
  topic: Topic;
  tags: string[] | undefined;
  stream: string;
  local: StreamLocal;
  cursor: CursorState | undefined;
}

export const bodyBytes = (body: string, encoding: 'utf8' | 'base64'): number =>
  encoding === 'base64' ? Buffer.from(body, 'base64').length : Buffer.byteLength(body, 'utf8');

export class QueueService {
  private readonly pollIntervalMs: number;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly notifier: Notifier,
    options: QueueServiceOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
  }

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
   */
  async sendBatch(topicName: string, inputs: SendInput[]): Promise<BatchResult[]> {
    const topic = await this.requireTopic(topicName);
    const results: BatchResult[] = [];
    const byStream = new Map<string, Prepared[]>();
    const partition = Math.floor(this.random.fraction() * topic.partitions);
    inputs.forEach((input, index) => {
      try {
        const prepared = this.prepare(topic, input, index, partition);
        const key = streamId(topic, prepared.local);
        byStream.set(key, [...(byStream.get(key) ?? []), prepared]);
      } catch (error) {
        if (!(error instanceof SluiceError)) throw error;
        results.push({ index, error });
      }
    });
    const seenDedup = new Map<string, number>();
    await Promise.all(
      [...byStream.entries()].map(async ([stream, entries]) => {
        for (const chunk of this.chunks(entries)) {
          results.push(...(await this.appendChunk(topic, stream, chunk, seenDedup)));
        }
      }),
    );
    this.notifier.notify(topic.name);
    return results.sort((a, b) => a.index - b.index);
  }

  private prepare(topic: Topic, input: SendInput, index: number, partition: number): Prepared {
    const bytes = bodyBytes(input.body, input.encoding);
    if (bytes > Limits.bodyMaxBytes) {
      throw new PayloadTooLargeError(`Message body is ${bytes} bytes; the limit is ${Limits.bodyMaxBytes} bytes (256 KiB).`, {
        issues: [{ path: 'body', message: 'too large' }],
      });
    }
    if (input.delaySeconds !== undefined || input.deliverAt !== undefined) {
      throw new InvalidArgumentError('Scheduled and delayed delivery are not available in this version of Sluice yet.', {
        issues: [{ path: input.delaySeconds !== undefined ? 'delaySeconds' : 'deliverAt', message: 'not supported yet' }],
      });
    }
    if (topic.type === 'fifo') {
      if (input.shardKey === undefined) {
        throw new ShardKeyRequiredError(`Topic '${topic.name}' is a FIFO topic: every message needs a shardKey.`, {
          issues: [{ path: 'shardKey', message: 'required on FIFO topics' }],
        });
      }
      return { index, input, local: { kind: 'shard', shardKey: input.shardKey }, bytes };
    }
    return { index, input, local: { kind: 'partition', partition }, bytes };
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
  ): Promise<BatchResult[]> {
    const out: BatchResult[] = [];
    let pending = [...chunk];
    // A dedup id repeated inside one batch answers with the first entry's result.
    const repeats: Prepared[] = [];
    pending = pending.filter((entry) => {
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
      const owners: Prepared[] = [];
      try {
        const { seq } = await this.stores.log.append(stream, (first) => {
          owners.length = 0;
          const extras: TransactItem[] = [];
          const records = pending.map((entry, i) => {
            const record = this.record(topic, entry.input, directMessageId(entry.local, first + i), now);
            if (entry.input.dedupId !== undefined) {
              extras.push(
                this.stores.markers.dedupItem(topic.name, entry.input.dedupId, this.sendResult(topic, record, first + i), now, Limits.dedupWindowSeconds),
              );
              owners.push(entry);
            }
            for (const key of entry.input.keys) {
              extras.push(this.stores.markers.keyItem(topic.name, key, record.messageId, record.deliverableAt, record.expiresAt));
              owners.push(entry);
            }
            return record;
          });
          return { records, extras };
        });
        pending.forEach((entry, i) => {
          out.push({
            index: entry.index,
            result: {
              messageId: directMessageId(entry.local, seq + i),
              state: 'deliverable',
              ...(topic.type === 'fifo' ? { sequence: seq + i } : {}),
            },
          });
        });
        pending = [];
      } catch (error) {
        if (!(error instanceof ExtraConditionFailedError)) {
          if (error instanceof SluiceError) {
            for (const entry of pending) out.push({ index: entry.index, error });
            pending = [];
            break;
          }
          throw error;
        }
        const owner = owners[error.index];
        if (!owner || owner.input.dedupId === undefined) throw error;
        const original = await this.stores.markers.dedupResult(topic.name, owner.input.dedupId, now);
        if (original) {
          out.push({ index: owner.index, result: original });
          pending = pending.filter((entry) => entry !== owner);
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
    return out;
  }

  private record(topic: Topic, input: SendInput, messageId: string, now: number): MessageRecord {
    return {
      messageId,
      topic: topic.name,
      body: input.body,
      encoding: input.encoding,
      tag: input.tag,
      keys: input.keys,
      properties: input.properties,
      shardKey: input.shardKey,
      sentAt: now,
      deliverableAt: now,
      expiresAt: now + topic.retentionSeconds * 1000,
      generation: topic.generation,
    };
  }

  private sendResult(topic: Topic, record: MessageRecord, seq: number): SendResult {
    return { messageId: record.messageId, state: 'deliverable', ...(topic.type === 'fifo' ? { sequence: seq } : {}) };
  }

  // ── receive ───────────────────────────────────────────────────────────

  async receive(groupName: string, request: ReceiveRequest): Promise<DeliveredMessage[]> {
    const group = await this.requireGroup(groupName);
    const subscribed = new Set(group.subscriptions.map((s) => s.topic));
    for (const [i, topic] of (request.topics ?? []).entries()) {
      if (!subscribed.has(topic)) {
        throw new InvalidArgumentError(`Group '${group.name}' does not subscribe to topic '${topic}'.`, {
          issues: [{ path: `topics/${i}`, message: 'not a subscription of this group' }],
        });
      }
    }
    const visibilityMs = (request.visibilityTimeoutSeconds ?? group.visibilityTimeoutSeconds) * 1000;
    const topics = request.topics ?? [...subscribed];
    const deadline = this.clock.now() + request.waitSeconds * 1000;
    for (;;) {
      const messages = await this.receiveOnce(group, topics, request.maxMessages, visibilityMs);
      const now = this.clock.now();
      if (messages.length > 0 || now >= deadline) return messages;
      await this.notifier.wait(topics, Math.min(this.pollIntervalMs, deadline - now));
    }
  }

  private async receiveOnce(group: Group, topicNames: string[], max: number, visibilityMs: number): Promise<DeliveredMessage[]> {
    const [topics, cursors] = await Promise.all([
      this.stores.catalog.getTopics(topicNames),
      this.stores.cursors.list(group.name),
    ]);
    const byStream = new Map(cursors.map((c) => [c.stream, c]));
    const candidates: Candidate[] = [];
    for (const subscription of group.subscriptions) {
      const topic = topics.get(subscription.topic);
      if (!topic || !topicNames.includes(topic.name)) continue;
      if (topic.type === 'standard') {
        for (let p = 0; p < topic.partitions; p++) {
          const local: StreamLocal = { kind: 'partition', partition: p };
          const stream = streamId(topic, local);
          candidates.push({ topic, tags: subscription.tags, stream, local, cursor: byStream.get(stream) });
        }
      }
    }
    // Start at a random stream so that concurrent receivers spread out.
    const offset = Math.floor(this.random.fraction() * Math.max(1, candidates.length));
    const ordered = [...candidates.slice(offset), ...candidates.slice(0, offset)];
    const out: DeliveredMessage[] = [];
    for (const candidate of ordered) {
      if (out.length >= max) break;
      out.push(...(await this.claimFrom(group, candidate, max - out.length, visibilityMs)));
    }
    return out;
  }

  private async claimFrom(group: Group, candidate: Candidate, want: number, visibilityMs: number): Promise<DeliveredMessage[]> {
    const { topic, stream } = candidate;
    let cursor = candidate.cursor;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      if (!cursor) {
        // Subscriptions create their cursors; this only repairs a subscription interrupted half-way.
        const head = await this.stores.log.head(stream);
        await this.stores.cursors.createIfAbsent(group.name, stream, StreamLog.nextAfter(head), now);
        cursor = await this.stores.cursors.get(group.name, stream);
        if (!cursor) return [];
      }
      const plan = await this.plan(group, candidate, cursor, want, visibilityMs, now);
      if (plan.change === undefined) {
        await this.deadLetter(group, stream, plan.dead, now);
        return plan.out;
      }
      if (await this.stores.cursors.claim(group.name, stream, plan.change)) {
        await this.deadLetter(group, stream, plan.dead, now);
        return plan.out;
      }
      cursor = await this.stores.cursors.get(group.name, stream);
    }
    return [];
  }

  private async plan(group: Group, candidate: Candidate, cursor: CursorState, want: number, visibilityMs: number, now: number) {
    const { topic, stream } = candidate;
    const out: DeliveredMessage[] = [];
    const grant: ClaimChange['grant'] = [];
    const close: ClaimChange['close'] = [];
    const dead: Array<{ lease: Lease; record: MessageRecord }> = [];
    const live = (record: MessageRecord | undefined): record is MessageRecord =>
      record !== undefined && record.expiresAt > now && record.generation === topic.generation && record.topic === topic.name;

    // 1. Expired leases go first: a redelivered message keeps its place ahead of later ones.
    const expired = expiredLeases(cursor, now).slice(0, want);
    if (expired.length > 0) {
      const segments = await this.stores.log.getSegments(expired.map((l) => ({ stream, seq: l.segment })));
      for (const lease of expired) {
        const record = recordAt(segments, lease.seq);
        if (!live(record)) {
          close.push({ done: doneEntry(lease, now, 'expired'), replaces: lease.token });
        } else if (lease.deliveries >= group.maxDeliveries) {
          dead.push({ lease, record });
        } else {
          const renewed: Lease = {
            ...lease,
            deliveries: lease.deliveries + 1,
            token: leaseToken(lease.deliveries + 1, this.random.token()),
            expiresAt: now + visibilityMs,
          };
          grant.push({ lease: renewed, replaces: lease.token });
          out.push(this.deliver(record, stream, topic, renewed));
        }
      }
    }

    // 2. Then messages never delivered to this group, from the cursor on.
    let next = cursor.next;
    let segmentStart = cursor.segmentStart;
    let remaining = want - out.length;
    if (remaining > 0) {
      const segments = await this.stores.log.read(stream, cursor.segmentStart, remaining + 1);
      outer: for (const segment of segments) {
        const end = segment.seq + segment.count;
        if (end <= next) continue;
        if (segment.seq > next) next = segment.seq; // an epoch began, or expired segments were removed
        for (let seq = next; seq < end; seq++) {
          if (remaining === 0) break outer;
          const record = segment.records[seq - segment.seq];
          next = seq + 1;
          segmentStart = next < end ? segment.seq : next;
          if (!live(record) || !tagMatches(candidate.tags, record.tag)) continue;
          const lease: Lease = {
            seq,
            expiresAt: now + visibilityMs,
            token: leaseToken(1, this.random.token()),
            deliveries: 1,
            segment: segment.seq,
            topic: undefined,
          };
          grant.push({ lease, replaces: undefined });
          out.push(this.deliver(record, stream, topic, lease));
          remaining--;
        }
      }
    }
    const changed = grant.length > 0 || close.length > 0 || next !== cursor.next;
    const change: ClaimChange | undefined = changed
      ? { expectNext: cursor.next, next, segmentStart, grant, close, forgetDone: doneToForget(cursor, close.length) }
      : undefined;
    return { out, change, dead };
  }

  private deliver(record: MessageRecord, stream: string, topic: Topic, lease: Lease): DeliveredMessage {
    return {
      messageId: record.messageId,
      receiptHandle: encodeReceipt({ topic: record.topic, stream, seq: lease.seq, token: lease.token }),
      topic: record.topic,
      body: record.body,
      encoding: record.encoding,
      tag: record.tag ?? null,
      keys: record.keys,
      properties: record.properties,
      shardKey: record.shardKey ?? null,
      sequence: topic.type === 'fifo' ? lease.seq : null,
      sentAt: iso(record.sentAt),
      deliverableAt: iso(record.deliverableAt),
      deliveryCount: lease.deliveries,
    };
  }

  /**
   * Moves messages that used up `maxDeliveries` to the group's dead-letter
   * topic: the append and the closing of the lease are one transaction, so
   * the message is in exactly one of the two places.
   */
  private async deadLetter(group: Group, stream: string, dead: Array<{ lease: Lease; record: MessageRecord }>, now: number) {
    if (dead.length === 0) return;
    let dlq = await this.stores.catalog.getTopic(group.deadLetterTopic);
    if (!dlq) {
      dlq = (
        await this.stores.catalog.putTopic(
          {
            name: group.deadLetterTopic,
            type: 'standard',
            retentionSeconds: Limits.retentionMaxSeconds,
            maxDelaySeconds: Limits.maxDelayDefaultSeconds,
            orderGroup: undefined,
            partitions: Limits.standardPartitions,
          },
          now,
        )
      ).topic;
    }
    const target = dlq;
    for (const { lease, record } of dead) {
      const local: StreamLocal = { kind: 'partition', partition: Math.floor(this.random.fraction() * target.partitions) };
      try {
        await this.stores.log.append(streamId(target, local), (seq) => ({
          records: [
            {
              ...record,
              messageId: directMessageId(local, seq),
              topic: target.name,
              properties: {
                ...record.properties,
                'sluice-dead-letter-source-topic': record.topic,
                'sluice-dead-letter-source-message-id': record.messageId,
                'sluice-dead-letter-group': group.name,
                'sluice-dead-letter-delivery-count': String(lease.deliveries),
              },
              deliverableAt: now,
              expiresAt: now + target.retentionSeconds * 1000,
              generation: target.generation,
            },
          ],
          extras: [this.stores.cursors.deadLetterItem(group.name, stream, doneEntry(lease, now, 'dead-lettered'), lease.token)],
        }));
        this.notifier.notify(target.name);
      } catch (error) {
        // Another receiver dead-lettered it, or its last holder committed it meanwhile.
        if (!(error instanceof ExtraConditionFailedError)) throw error;
      }
    }
  }

  // ── visibility and commit ─────────────────────────────────────────────

  async changeVisibility(groupName: string, receiptHandle: string, visibilityTimeoutSeconds: number): Promise<void> {
    const receipt = decodeReceipt(receiptHandle);
    const group = await this.requireGroup(groupName);
    const ok = await this.stores.cursors.setVisibility(
      group.name,
      receipt.stream,
      receipt.seq,
      receipt.token,
      this.clock.now() + visibilityTimeoutSeconds * 1000,
    );
    if (!ok) {
      throw new ReceiptHandleExpiredError(
        'This receipt handle is no longer the latest lease of its message (it was committed, redelivered or dead-lettered).',
      );
    }
    if (visibilityTimeoutSeconds === 0) this.notifier.notify(receipt.topic);
  }

  async commit(groupName: string, receiptHandles: string[]): Promise<CommitResult[]> {
    const receipts = receiptHandles.map((handle, i) => {
      try {
        return decodeReceipt(handle);
      } catch (error) {
        if (error instanceof InvalidArgumentError) {
          throw new InvalidArgumentError(`entries/${i}/receiptHandle is not a receipt handle issued by Sluice.`, {
            issues: [{ path: `entries/${i}/receiptHandle`, message: 'malformed receipt handle' }],
          });
        }
        throw error;
      }
    });
    const group = await this.requireGroup(groupName);
    const now = this.clock.now();
    const byStream = new Map<string, number[]>();
    receipts.forEach((receipt, i) => byStream.set(receipt.stream, [...(byStream.get(receipt.stream) ?? []), i]));
    const results: CommitResult[] = new Array(receipts.length);
    await Promise.all(
      [...byStream.entries()].map(async ([stream, indexes]) => {
        const outcomes = await this.stores.cursors.commit(
          group.name,
          stream,
          indexes.map((i) => ({ seq: receipts[i]!.seq, token: receipts[i]!.token })),
          now,
        );
        indexes.forEach((i, j) => {
          const receiptHandle = receiptHandles[i] ?? '';
          results[i] =
            outcomes[j] === 'committed'
              ? { receiptHandle, status: 'committed' }
              : {
                  receiptHandle,
                  error: new ReceiptHandleExpiredError(
                    'The lease of this receipt handle expired and the message was delivered again (or dead-lettered); only the latest receipt handle can commit.',
                  ),
                };
        });
      }),
    );
    return results;
  }

  // ── queries ───────────────────────────────────────────────────────────

  async getMessage(topicName: string, messageId: string) {
    const topic = await this.requireTopic(topicName);
    const found = await this.findRecord(topic, messageId);
    if (!found) throw new MessageNotFoundError(`Message '${messageId}' was not found in topic '${topic.name}' (it may have expired).`);
    const { record, stream, seq } = found;
    const groups = (await this.stores.catalog.allGroups()).filter((g) => g.subscriptions.some((s) => s.topic === topic.name));
    const deliveries = await Promise.all(
      groups.map(async (group) => {
        const cursor = await this.stores.cursors.get(group.name, stream);
        const tags = group.subscriptions.find((s) => s.topic === topic.name)?.tags;
        return { group: group.name, ...groupState(cursor, seq, tagMatches(tags, record.tag), record.sentAt < group.createdAt) };
      }),
    );
    return { ...this.describe(topic, record, seq), groups: deliveries };
  }

  async messagesByKey(topicName: string, key: string, limit: number, nextToken: string | undefined) {
    const topic = await this.requireTopic(topicName);
    const page = await this.stores.markers.byKey(topic.name, key, limit, nextToken);
    const messages = [];
    for (const messageId of page.messageIds) {
      const found = await this.findRecord(topic, messageId);
      if (found) messages.push(this.describe(topic, found.record, found.seq));
    }
    return { messages, nextToken: page.nextToken };
  }

  private describe(topic: Topic, record: MessageRecord, seq: number) {
    return {
      messageId: record.messageId,
      topic: record.topic,
      state: 'deliverable' as const,
      body: record.body,
      encoding: record.encoding,
      tag: record.tag ?? null,
      keys: record.keys,
      properties: record.properties,
      shardKey: record.shardKey ?? null,
      sequence: topic.type === 'fifo' ? seq : null,
      sentAt: iso(record.sentAt),
      deliverableAt: iso(record.deliverableAt),
      expiresAt: iso(record.expiresAt),
    };
  }

  private async findRecord(topic: Topic, messageId: string) {
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
    return { record, stream, seq: address.seq };
  }

  // ── helpers ───────────────────────────────────────────────────────────

  async requireTopic(name: string): Promise<Topic> {
    const topic = await this.stores.catalog.getTopic(name);
    if (!topic) throw new TopicNotFoundError(name);
    return topic;
  }

  async requireGroup(name: string): Promise<Group> {
    const group = await this.stores.catalog.getGroup(name);
    if (!group) throw new GroupNotFoundError(name);
    return group;
  }
}

const recordAt = (segments: Segment[], seq: number): MessageRecord | undefined => {
  const segment = segments.find((s) => s.seq <= seq && seq < s.seq + s.count);
  return segment?.records[seq - segment.seq];
};

const doneEntry = (lease: Lease, at: number, outcome: DoneEntry['outcome']): DoneEntry => ({
  seq: lease.seq,
  token: lease.token,
  at,
  outcome,
  deliveries: lease.deliveries,
});

/** A message's state in one group, from that group's cursor on its stream. */
function groupState(cursor: CursorState | undefined, seq: number, matches: boolean, beforeSubscription: boolean) {
  const none = { deliveryCount: 0, committedAt: null as string | null };
  if (!matches) return { state: GroupDeliveryState.filtered, ...none };
  const lease = cursor?.leases.get(seq);
  if (lease) return { state: GroupDeliveryState.inFlight, deliveryCount: lease.deliveries, committedAt: null };
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
