/**
 * The writes of a commit's `publish` outputs, all for the commit's own
 * transaction, so that they exist if and only if the commit took effect
 * (SPEC §3.5; docs/design.md, Edge validation). A publish entry is a send
 * (every field but `transaction`), and each field costs what it costs on a
 * send, inside the same transaction:
 *
 *   deliverable now → its stream segment (WritePlanner.writes)
 *   delaySeconds / deliverAt in the future → a deferred item, armed after the write
 *   dedupId → a dedup marker; a marker that exists names a repeat, which is
 *             dropped (stores nothing new) before the commit is written again
 *   keys    → one key index entry per distinct key
 */
import type { DueWake } from '../ports/timers.js';
import { iso, Limits, type MessageRecord, type SendResult } from '../domain/model.js';
import type { MessageIdCodec } from '../domain/message-ids.js';
import { deferredMessageId, streamId } from '../domain/streams.js';
import type { StreamWrite } from '../adapters/dynamodb/stream-log.js';
import type { WriteBatch } from '../adapters/dynamodb/write-batch.js';
import type { Random } from '../ports/random.js';
import type { Stores } from './stores.js';
import type { Outgoing, WritePlanner } from './write-planner.js';

/** Names of an output's side items in the commit's batch (write-batch.ts). */
const DEDUP_ITEM_PREFIX = 'publish-dedup:';
const dedupItem = (output: number) => `${DEDUP_ITEM_PREFIX}${output}`;
const keyItem = (output: number, key: number) => `publish-key:${output}:${key}`;
const deferredItem = (output: number) => `publish-deferred:${output}`;

/** Identifies a dedup id on its topic (the scope of dedup). */
export const dedupScope = (output: Outgoing): string | undefined =>
  output.input.dedupId === undefined ? undefined : `${output.topic.name}\u0000${output.input.dedupId}`;

export interface OutputPlan {
  /** Stream segments (and FIFO notices) of the outputs deliverable now; empty when there are none. */
  writes: StreamWrite[];
  /** Adds the side items to `batch`; `seqs` are the first sequence numbers of {@link writes}. */
  addTo(batch: WriteBatch, seqs: number[]): void;
  /** The delayed outputs (deferred id, due time): arm their timers once the write succeeded. */
  wakes: DueWake[];
  /** The dedup scope of the output whose marker is the batch item `item`: a repeat of an earlier send. */
  repeatNamed(item: string): string | undefined;
}

export class OutputPlanner {
  constructor(
    private readonly stores: Stores,
    private readonly random: Random,
    private readonly planner: WritePlanner,
  ) {}

  /**
   * Plans `outgoing` at `now`, leaving out the outputs whose dedup scope is in
   * `repeats` (found by an earlier attempt) and every later output of a
   * scope already planned (one commit that publishes a dedup id twice).
   */
  plan(outgoing: Outgoing[], now: number, ids: MessageIdCodec, repeats: ReadonlySet<string> = new Set()): OutputPlan {
    const seen = new Set<string>();
    const kept = outgoing.filter((o) => {
      const scope = dedupScope(o);
      if (scope === undefined) return true;
      if (repeats.has(scope) || seen.has(scope)) return false;
      seen.add(scope);
      return true;
    });
    const immediate = kept.filter((o) => o.dueAt === undefined);
    const delayed = kept.filter((o) => o.dueAt !== undefined);
    const { writes, landed } = this.planner.writes(immediate, now, true, ids);
    const scopes = new Map<string, string>();
    // Ids of delayed outputs are drawn once per plan: a retried write reuses them.
    const deferred = delayed.map((o) => {
      const id = this.random.id();
      const dueAt = o.dueAt ?? now;
      const record: MessageRecord = {
        ...this.planner.record(o.topic, o.input, deferredMessageId(id), now),
        deliverableAt: dueAt,
        expiresAt: dueAt + o.topic.retentionSeconds * 1000,
      };
      return { o, id, dueAt, record };
    });

    const addSideItems = (batch: WriteBatch, n: number, o: Outgoing, record: MessageRecord, result: SendResult) => {
      const scope = dedupScope(o);
      if (scope !== undefined && o.input.dedupId !== undefined) {
        batch.add(dedupItem(n), this.stores.markers.dedupItem(o.topic, o.input.dedupId, result, now, Limits.dedupWindowSeconds));
        scopes.set(dedupItem(n), scope);
      }
      // A key given twice is one index entry (the same item twice would fail the whole transaction).
      [...new Set(o.input.keys)].forEach((key, j) =>
        batch.add(keyItem(n, j), this.stores.markers.keyItem(o.topic.name, key, record.messageId, record.deliverableAt, record.expiresAt)),
      );
    };

    return {
      writes,
      wakes: deferred.map((d) => ({ id: d.id, dueAt: d.dueAt })),
      repeatNamed: (item) => (item.startsWith(DEDUP_ITEM_PREFIX) ? scopes.get(item) : undefined),
      addTo: (batch, seqs) => {
        let n = 0;
        // Records landed per stream in the order of `immediate`: walk it with a cursor per stream.
        const byStream = new Map(landed(seqs).map((l) => [l.stream, { landed: l, next: 0 }]));
        for (const o of immediate) {
          const at = byStream.get(streamId(o.topic, o.local));
          const record = at?.landed.records[at.next];
          if (!at || !record) throw new Error('a planned output has no landed record');
          const seq = at.landed.firstSeq + at.next;
          at.next++;
          addSideItems(batch, n++, o, record, {
            messageId: record.messageId,
            state: 'deliverable',
            ...(o.topic.type === 'fifo' ? { sequence: seq } : {}),
          });
        }
        for (const d of deferred) {
          const k = n++;
          batch.add(deferredItem(k), this.stores.deferred.scheduleItem(d.id, d.record, d.dueAt, d.o.topic.retentionSeconds));
          addSideItems(batch, k, d.o, d.record, { messageId: d.record.messageId, state: 'scheduled', deliverAt: iso(d.dueAt) });
        }
      },
    };
  }
}
