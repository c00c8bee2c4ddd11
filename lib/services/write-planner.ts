/**
 * Plans stream writes for outgoing messages — it writes nothing itself:
 * checks what can be checked before a write, picks each message's stream,
 * builds its record, groups records into one segment per stream and plans the
 * FIFO notices that announce shard activity (docs/design.md, Streams and
 * FIFO). Shared by send, the release of deferred messages and
 * commit-with-publish; the caller hands the plan to `StreamLog`.
 */
import { DelayTooLongError, PayloadTooLargeError, ShardKeyRequiredError } from '../domain/errors.js';
import { Limits, type MessageRecord, type SendInput, type Topic } from '../domain/model.js';
import type { MessageIdCodec } from '../domain/message-ids.js';
import {
  MAX_SEQ,
  noticeStreamOf,
  streamId,
  type StreamLocal,
} from '../domain/streams.js';
import { StreamLog, type Notice, type StreamWrite } from '../adapters/dynamodb/stream-log.js';
import { messageBytes, storedRecordMaxBytes } from '../adapters/dynamodb/records.js';
import type { Clock } from '../ports/clock.js';
import type { Random } from '../ports/random.js';

const idOf = (ids: MessageIdCodec | undefined, o: Outgoing, seq: number): string => {
  if (!ids) throw new Error('A message without an id was planned without the message-id codec.');
  return ids.messageId(o.topic, o.local, seq);
};

export const bodyBytes = (body: string, encoding: 'utf8' | 'base64'): number =>
  encoding === 'base64' ? Buffer.from(body, 'base64').length : Buffer.byteLength(body, 'utf8');

/**
 * The size limits of a message (413): its body, and the whole message — which keeps the segment
 * item of its dead-letter copy below DynamoDB's 400 KB (docs/design.md, Limits by construction).
 */
function checkSize(input: SendInput, path: string): void {
  const at = (field: string) => (path ? `${path}/${field}` : field);
  const bytes = bodyBytes(input.body, input.encoding);
  if (bytes > Limits.bodyMaxBytes) {
    throw new PayloadTooLargeError(`Message body is ${bytes} bytes; the limit is ${Limits.bodyMaxBytes} bytes (256 KiB).`, {
      issues: [{ path: at('body'), message: 'too large' }],
    });
  }
  const whole = messageBytes(input);
  if (whole > Limits.messageMaxBytes) {
    throw new PayloadTooLargeError(
      `Message is ${whole} bytes (body as sent, keys, properties, tag and shard key in UTF-8); the limit is ${Limits.messageMaxBytes} bytes.`,
      { issues: [{ path, message: 'too large (body, keys, properties, tag and shard key together)' }] },
    );
  }
}

/** One message bound for one topic. */
export interface Outgoing {
  topic: Topic;
  input: SendInput;
  local: StreamLocal;
  /** Scheduled: deliverable at this time (ms), later than now. */
  dueAt?: number;
  /** Set when the message already has an id and a send time (a released scheduled message). */
  messageId?: string;
  sentAt?: number;
}

/** Where the messages of one write landed. */
export interface Landed {
  topic: Topic;
  local: StreamLocal;
  stream: string;
  firstSeq: number;
  records: MessageRecord[];
  /** The segment opened an epoch of its FIFO shard (its notice says so: docs/design.md, Idle shards expire). */
  epoch?: boolean;
}

export class WritePlanner {
  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
  ) {}

  /**
   * Checks what can be checked before anything is written (size, shard key,
   * features this version lacks) and picks the stream.
   * `partition` is the standard-topic partition shared by a batch. `admitted`: the
   * message passed the size checks when it was sent (a release of a scheduled or
   * half message, a pending commit's saved outputs): not checked again, so that
   * a message admitted by an earlier version is not refused after the upgrade.
   */
  route(topic: Topic, input: SendInput, partition?: number, path = '', { admitted = false }: { admitted?: boolean } = {}): Outgoing {
    const at = (field: string) => (path ? `${path}/${field}` : field);
    if (!admitted) checkSize(input, path);
    let dueAt: number | undefined;
    if (input.delaySeconds !== undefined || input.deliverAt !== undefined) {
      const now = this.clock.now();
      const due = input.deliverAt ?? now + (input.delaySeconds ?? 0) * 1000;
      if (due - now > topic.maxDelaySeconds * 1000) {
        const field = input.deliverAt !== undefined ? 'deliverAt' : 'delaySeconds';
        throw new DelayTooLongError(
          `${field} is ${Math.ceil((due - now) / 1000)} s ahead; topic '${topic.name}' allows at most ${topic.maxDelaySeconds} s (maxDelaySeconds).`,
          { issues: [{ path: at(field), message: 'beyond the topic\'s maxDelaySeconds' }] },
        );
      }
      // A time in the past (or now) means deliverable at once.
      if (due > now) dueAt = due;
    }
    if (topic.type === 'fifo') {
      if (input.shardKey === undefined) {
        throw new ShardKeyRequiredError(`Topic '${topic.name}' is a FIFO topic: every message needs a shardKey.`, {
          issues: [{ path: at('shardKey'), message: 'required on FIFO topics' }],
        });
      }
      return { topic, input, local: { kind: 'shard', shardKey: input.shardKey }, ...(dueAt === undefined ? {} : { dueAt }) };
    }
    const p = partition ?? Math.floor(this.random.fraction() * topic.partitions);
    return { topic, input, local: { kind: 'partition', partition: p % topic.partitions }, ...(dueAt === undefined ? {} : { dueAt }) };
  }

  record(topic: Topic, input: SendInput, messageId: string, now: number): MessageRecord {
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

  /**
   * An upper bound of the bytes an outgoing message will take in a segment
   * (`storedRecordMaxBytes`), known before its sequence number: its id is
   * counted at the largest sequence number, the longest id its stream can give
   * (an id's length depends only on the length of what it seals).
   */
  storedBytes(o: Outgoing, now: number, ids: MessageIdCodec): number {
    return storedRecordMaxBytes(this.record(o.topic, o.input, o.messageId ?? ids.messageId(o.topic, o.local, MAX_SEQ), now));
  }

  /**
   * Stream writes for outgoing messages, one segment per stream (array order
   * kept inside a stream), plus the notice segments announcing FIFO shards —
   * all for one {@link StreamLog.appendMany} transaction. `landed(seqs)`
   * tells where each group of messages went once the append succeeded.
   * Messages without an id get theirs from `ids` (sealed addresses); callers
   * whose messages all have ids (releases) pass none.
   */
  writes(outgoing: Outgoing[], now: number, inlineNotices: boolean, ids: MessageIdCodec | undefined): { writes: StreamWrite[]; landed: (seqs: number[]) => Landed[] } {
    const byStream = new Map<string, Outgoing[]>();
    for (const o of outgoing) {
      const id = streamId(o.topic, o.local);
      byStream.set(id, [...(byStream.get(id) ?? []), o]);
    }
    const groups = [...byStream.entries()];
    const built: MessageRecord[][] = [];
    const writes: StreamWrite[] = groups.map(([stream, items], i) =>
      StreamLog.recordWrite(stream, items.length, (seq) => {
        const records = items.map((o, j) => {
          const record = this.record(o.topic, o.input, o.messageId ?? idOf(ids, o, seq + j), now);
          return o.sentAt === undefined ? record : { ...record, sentAt: o.sentAt };
        });
        built[i] = records;
        return records;
      }),
    );
    // Notices: one segment per notice stream, built from the shard segments' sequence numbers.
    const noticeStreams = new Map<string, Array<{ index: number; shardKey: string; count: number; retention: number }>>();
    groups.forEach(([, items], index) => {
      const first = items[0];
      if (!first || first.local.kind !== 'shard') return;
      const id = noticeStreamOf(first.topic, first.local.shardKey);
      noticeStreams.set(id, [
        ...(noticeStreams.get(id) ?? []),
        { index, shardKey: first.local.shardKey, count: items.length, retention: first.topic.retentionSeconds },
      ]);
    });
    for (const [stream, entries] of inlineNotices ? noticeStreams : []) {
      const ttl = Math.ceil(now / 1000) + Math.max(...entries.map((e) => e.retention));
      writes.push(
        StreamLog.noticeWrite(
          stream,
          (seqs, opened): Notice[] =>
            entries.map((e) => ({
              shardKey: e.shardKey,
              from: seqs[e.index] ?? 0,
              to: (seqs[e.index] ?? 0) + e.count - 1,
              ...(opened[e.index] ? { epoch: true } : {}),
            })),
          ttl,
        ),
      );
    }
    return {
      writes,
      landed: (seqs) =>
        groups.map(([stream, items], i) => ({
          topic: items[0]!.topic,
          local: items[0]!.local,
          stream,
          firstSeq: seqs[i] ?? 0,
          records: built[i] ?? [],
        })),
    };
  }

  /** Notices announcing FIFO segments that landed (written after them when not inline). */
  static notices(landed: Landed[]): Map<string, { notices: Notice[]; ttl: number; topics: Set<string> }> {
    const out = new Map<string, { notices: Notice[]; ttl: number; topics: Set<string> }>();
    for (const l of landed) {
      if (l.local.kind !== 'shard') continue;
      const stream = noticeStreamOf(l.topic, l.local.shardKey);
      const entry = out.get(stream) ?? { notices: [], ttl: 0, topics: new Set<string>() };
      entry.topics.add(l.topic.name);
      entry.notices.push({
        shardKey: l.local.shardKey,
        from: l.firstSeq,
        to: l.firstSeq + l.records.length - 1,
        ...(l.epoch ? { epoch: true } : {}),
      });
      entry.ttl = Math.max(entry.ttl, ...l.records.map((r) => Math.ceil(r.expiresAt / 1000)));
      out.set(stream, entry);
    }
    return out;
  }

  /** The notice that re-announces a message already in a FIFO shard (a dedup hit re-writes it). */
  static noticeFor(topic: Topic, shardKey: string, seq: number): { stream: string; notice: Notice } {
    return {
      stream: noticeStreamOf(topic, shardKey),
      notice: { shardKey, from: seq, to: seq },
    };
  }
}
