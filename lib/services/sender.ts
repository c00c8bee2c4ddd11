/**
 * The send pipeline (docs/design.md, Append, Idempotent send, Scheduled and
 * Transactional messages): route each entry, then
 *
 *   deliverable now  → one segment per stream and chunk, with its dedup
 *                      markers and key index entries in the same transaction;
 *                      FIFO shards announced by notices written after them
 *   scheduled        → a deferred item (+ markers), then its timer is armed
 *   transactional    → a half message (+ markers), invisible until committed
 *
 * A dedup hit answers the original send's result and writes nothing new.
 */
import { InvalidArgumentError, ProducerGroupNotFoundError, SluiceError, ThrottledError } from '../domain/errors.js';
import { Limits, iso, type MessageRecord, type SendInput, type SendResult, type Topic } from '../domain/model.js';
import type { MessageIdCodec } from '../domain/message-ids.js';
import { deferredMessageId, isShardStream, noticeStream, noticeStreamCount, streamId, streamNamespace, type StreamLocal } from '../domain/streams.js';
import { Contention } from '../adapters/dynamodb/append-contention.js';
import { LostRaceError, type Notice } from '../adapters/dynamodb/stream-log.js';
import { ItemConditionFailedError, WriteBatch, type TransactItem } from '../adapters/dynamodb/write-batch.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Random } from '../ports/random.js';
import type { DueWake, Timers } from '../ports/timers.js';
import { requireTopic } from './lookups.js';
import { PartitionPicker } from './partition-picker.js';
import type { Stores } from './stores.js';
import { WritePlanner, type Landed, type Outgoing } from './write-planner.js';

export type BatchResult = { index: number; result: SendResult } | { index: number; error: SluiceError };

/**
 * Largest sum of stored record sizes (an upper bound, `WritePlanner.storedBytes`) in one segment;
 * DynamoDB items stop at 400 KB, the rest is room for the segment's keys and attributes.
 */
const SEGMENT_MAX_BYTES = 350 * 1024;
/** Side items per transaction (DynamoDB allows 100 items, the segment and sentinel take two). */
const SEGMENT_MAX_EXTRAS = 90;

/** Names of the items written with a message (write-batch.ts): a failed condition names its item. */
const DEFERRED_ITEM = 'deferred';
const dedupItem = (entry: { index: number }) => `dedup:${entry.index}`;
const keyItem = (entry: { index: number }, key: number) => `key:${entry.index}:${key}`;

/** A notice written again for a message a dedup hit found already in its FIFO shard. */
interface Reannounce {
  stream: string;
  /** The topic of the message it announces (decides the notice segment's wake flag). */
  topic: string;
  notice: Notice;
  ttl: number;
}

interface Prepared extends Outgoing {
  index: number;
  bytes: number;
}

export class Sender {
  private readonly picker: PartitionPicker;
  /** Which notice stream of a FIFO namespace a send's notices go to (per namespace, as partitions per topic). */
  private readonly noticePicker: PartitionPicker;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly notifier: Notifier,
    private readonly timers: Timers,
    private readonly planner: WritePlanner,
    /** How a standard topic's lost races wait and when they give up (per topic; FIFO streams: the stream log's). */
    private readonly contention: Contention = new Contention(),
  ) {
    this.picker = new PartitionPicker(clock, random);
    this.noticePicker = new PartitionPicker(clock, random);
  }

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
    const topic = await requireTopic(this.stores, topicName);
    const ids = await this.stores.ids.codec();
    const results: BatchResult[] = [];
    const byStream = new Map<string, Prepared[]>();
    const partition = Math.floor(this.random.fraction() * topic.partitions);
    const scheduled: Prepared[] = [];
    const halves: Prepared[] = [];
    const now = this.clock.now();
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
        byStream.set(key, [...(byStream.get(key) ?? []), { ...routed, index, bytes: this.planner.storedBytes(routed, now, ids) }]);
      } catch (error) {
        if (!(error instanceof SluiceError)) throw error;
        results.push({ index, error });
      }
    });
    const seenDedup = new Map<string, number>();
    const landed: Landed[] = [];
    const reannounce: Reannounce[] = [];
    const wakes: DueWake[] = [];
    for (const entry of scheduled) results.push(await this.schedule(topic, entry, wakes));
    // One wake-up per due second for the whole request, carrying its ids (a dedup hit re-arms too:
    // the first attempt may have died before arming its timer).
    if (wakes.length > 0) await this.timers.arm(wakes);
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
        // A FIFO shard's entries keep their array order (SPEC §3.2): once a part of them failed, the
        // later parts are not written but fail with it, so a retry of the failed entries lands in order.
        let failed: SluiceError | undefined;
        for (const chunk of this.chunks(entries)) {
          if (failed) {
            for (const entry of chunk) results.push({ index: entry.index, error: failed });
            continue;
          }
          const appended = await this.appendChunk(topic, stream, chunk, seenDedup, ids);
          results.push(...appended.results);
          landed.push(...appended.landed);
          reannounce.push(...appended.reannounce);
          if (isShardStream(stream)) failed = appended.results.find((r): r is Extract<BatchResult, { error: SluiceError }> => 'error' in r)?.error;
        }
      }),
    );
    // Written after the segments: a notice never announces a message that does not exist.
    // Dedup hits re-announce their originals in the same notice segments (one append per notice stream, not per entry).
    const notices = WritePlanner.notices(landed);
    for (const { stream, topic, notice, ttl } of reannounce) {
      const entry = notices.get(stream) ?? { notices: [], ttl: 0, topics: new Set<string>() };
      entry.topics.add(topic);
      entry.notices.push(notice);
      entry.ttl = Math.max(entry.ttl, ttl);
      notices.set(stream, entry);
    }
    // The notice, not the FIFO segment, wakes push groups and parked consumers: a wake-up before it would find nothing.
    // All of them in one segment, on a notice stream of the namespace this container picks (docs/design.md, FIFO, "Notices go to any notice stream").
    if (notices.size > 0) {
      const all = [...notices.values()];
      await this.announce(
        topic,
        all.flatMap((entry) => entry.notices),
        Math.max(...all.map((entry) => entry.ttl)),
        [...new Set(all.flatMap((entry) => [...entry.topics]))],
      );
    }
    this.notifier.notify(topic.name);
    return results.sort((a, b) => a.index - b.index);
  }

  /**
   * Appends a send's notices, all in one segment, to one notice stream of the topic's namespace:
   * whichever this container picks (sticky, least-contended, as a standard topic's partitions), since
   * a receive takes a shard's notices from any notice stream. A lost race moves the notices to another
   * stream at once while one this container has not lost on lately is left, else they wait their turn
   * (full jitter); 429 only once the namespace stayed contended for the whole budget.
   */
  private async announce(topic: Topic, notices: Notice[], ttl: number, topics: string[]): Promise<void> {
    const namespace = streamNamespace(topic);
    const streams = { name: namespace, partitions: noticeStreamCount(topic) };
    const run = this.contention.begin([`N#${namespace}`]);
    for (;;) {
      await run.turn(this.noticePicker.allContended(streams));
      const bucket = this.noticePicker.pick(streams);
      const stream = noticeStream(namespace, bucket);
      let outcome: 'won' | 'lost' | 'failed' = 'failed';
      try {
        await this.stores.log.appendNotices(stream, notices, ttl, topics, { once: true });
        outcome = 'won';
        run.won();
        return;
      } catch (error) {
        if (!(error instanceof LostRaceError)) throw error;
        outcome = 'lost';
        if (run.lostRace()) continue;
        this.stores.log.reportThrottled([stream]);
        throw new ThrottledError('Too many concurrent writers on this topic; retry the request.');
      } finally {
        this.noticePicker.done(streams, bucket, outcome);
      }
    }
  }

  /** Entries of one stream in chunks that fit one segment and one transaction. */
  private *chunks(entries: Prepared[]): Generator<Prepared[]> {
    let chunk: Prepared[] = [];
    let bytes = 0;
    let extras = 0;
    for (const entry of entries) {
      const extra = entry.input.keys.length + (entry.input.dedupId === undefined ? 0 : 1);
      if (chunk.length > 0 && (bytes + entry.bytes > SEGMENT_MAX_BYTES || extras + extra > SEGMENT_MAX_EXTRAS)) {
        yield chunk;
        chunk = [];
        bytes = 0;
        extras = 0;
      }
      chunk.push(entry);
      bytes += entry.bytes;
      extras += extra;
    }
    if (chunk.length > 0) yield chunk;
  }

  private async appendChunk(
    topic: Topic,
    stream: string,
    chunk: Prepared[],
    seenDedup: Map<string, number>,
    ids: MessageIdCodec,
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
    // Standard topics: the picked partition gets one try; a lost race moves the send to another at
    // once while one this container has not lost on lately is left, else it waits its turn (full
    // jitter, append-contention.ts). 429 only once the topic stayed contended for the whole budget.
    const run = topic.type === 'standard' ? this.contention.begin([`T#${topic.name}`]) : undefined;
    while (pending.length > 0) {
      await run?.turn(this.picker.allContended(topic));
      const now = this.clock.now();
      const partition = topic.type === 'standard' ? this.picker.pick(topic) : undefined;
      const local: StreamLocal | undefined = partition === undefined ? undefined : { kind: 'partition', partition };
      const target = local ? streamId(topic, local) : stream;
      if (local) pending = pending.map((entry) => ({ ...entry, local }));
      let outcome: 'won' | 'lost' | 'failed' = 'failed';
      try {
        const { seq, records } = await this.stores.log.append(target, (first) => {
          const extras = new WriteBatch();
          const records = pending.map((entry, i) => {
            const record = this.planner.record(topic, entry.input, ids.messageId(topic, entry.local, first + i), now);
            if (entry.input.dedupId !== undefined) {
              extras.add(
                dedupItem(entry),
                this.stores.markers.dedupItem(topic, entry.input.dedupId, sendResult(topic, record, first + i), now, Limits.dedupWindowSeconds),
              );
            }
            // A key given twice is one index entry: the same item twice fails the whole transaction.
            distinct(entry.input.keys).forEach((key, j) =>
              extras.add(keyItem(entry, j), this.stores.markers.keyItem(topic.name, key, record.messageId, record.deliverableAt, record.expiresAt)),
            );
            return record;
          });
          return { records, extras };
        }, local ? { once: true } : { wake: pending[0]?.local.kind !== 'shard', count: pending.length });
        outcome = 'won';
        run?.won();
        pending.forEach((entry, i) => out.push({ index: entry.index, result: sendResult(topic, records[i]!, seq + i) }));
        const first = pending[0]!;
        const epoch = this.stores.log.openedEpochAt(target, seq);
        landed.push({ topic, local: first.local, stream: target, firstSeq: seq, records, ...(epoch ? { epoch } : {}) });
        pending = [];
      } catch (error) {
        if (error instanceof LostRaceError) {
          outcome = 'lost';
          if (run?.lostRace()) continue;
          this.stores.log.reportThrottled([target]);
          const throttled = new ThrottledError('Too many concurrent writers on this topic; retry the request.');
          for (const entry of pending) out.push({ index: entry.index, error: throttled });
          pending = [];
          break;
        }
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
        const original = await this.stores.markers.dedupResult(topic, owner.input.dedupId, now);
        if (original) {
          out.push({ index: owner.index, result: original });
          pending = pending.filter((entry) => entry !== owner);
          // Re-announce the original: its first send may have died before writing its notice.
          if (owner.local.kind === 'shard' && original.sequence !== undefined) {
            const { stream: noticeStream, notice } = WritePlanner.noticeFor(topic, owner.local.shardKey, original.sequence);
            reannounce.push({ stream: noticeStream, topic: topic.name, notice, ttl: Math.ceil(now / 1000) + topic.retentionSeconds });
          }
        }
      } finally {
        if (partition !== undefined) this.picker.done(topic, partition, outcome);
      }
    }
    for (const repeat of repeats) {
      const first = out.find((r) => r.index === seenDedup.get(repeat.input.dedupId ?? ''));
      if (first && 'result' in first) out.push({ index: repeat.index, result: first.result });
      else {
        const original = await this.stores.markers.dedupResult(topic, repeat.input.dedupId ?? '', this.clock.now());
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
  private async schedule(topic: Topic, entry: Prepared, wakes: DueWake[]): Promise<BatchResult> {
    const now = this.clock.now();
    const dueAt = entry.dueAt ?? now;
    const id = this.random.id();
    const messageId = deferredMessageId(id);
    const record = {
      ...this.planner.record(topic, entry.input, messageId, now),
      deliverableAt: dueAt,
      expiresAt: dueAt + topic.retentionSeconds * 1000,
    };
    const result: SendResult = { messageId, state: 'scheduled', deliverAt: iso(dueAt) };
    const original = await this.storeDeferred(topic, entry, this.stores.deferred.scheduleItem(id, record, dueAt, topic.retentionSeconds), result, record, now);
    const stored = original ?? result;
    if (stored.state === 'scheduled' && stored.deliverAt) wakes.push({ id: stored.messageId.slice(1), dueAt: Date.parse(stored.deliverAt) });
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
      batch.add(dedupItem(entry), this.stores.markers.dedupItem(topic, entry.input.dedupId, result, now, Limits.dedupWindowSeconds));
    }
    distinct(entry.input.keys).forEach((key, j) =>
      batch.add(keyItem(entry, j), this.stores.markers.keyItem(topic.name, key, record.messageId, record.deliverableAt, record.expiresAt)),
    );
    try {
      await this.stores.writer.write(batch);
      return undefined;
    } catch (error) {
      if (!(error instanceof ItemConditionFailedError) || error.item !== dedupItem(entry) || entry.input.dedupId === undefined) throw error;
      const original = await this.stores.markers.dedupResult(topic, entry.input.dedupId, now);
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
    const messageId = deferredMessageId(id);
    const record = this.planner.record(topic, entry.input, messageId, now);
    const result: SendResult = { messageId, state: 'prepared', transactionId: `t${id}` };
    const checkAfter = transaction.checkAfterSeconds ?? Limits.checkAfterDefaultSeconds;
    const item = this.stores.deferred.prepareItem(id, record, producer.name, checkAfter, now, topic.retentionSeconds);
    const original = await this.storeDeferred(topic, entry, item, result, record, now);
    // The first check-back to the second (a dedup hit armed its own when it was stored).
    if (!original) await this.timers.armChecks([{ transactionId: result.transactionId!, at: now + checkAfter * 1000 }]);
    return { index: entry.index, result: original ?? result };
  }
}

const distinct = (keys: string[]): string[] => [...new Set(keys)];

const sendResult = (topic: Topic, record: MessageRecord, seq: number): SendResult => ({
  messageId: record.messageId,
  state: 'deliverable',
  ...(topic.type === 'fifo' ? { sequence: seq } : {}),
});
