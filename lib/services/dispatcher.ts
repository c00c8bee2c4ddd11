/**
 * The dispatcher: the one consumer of "this message became deliverable".
 * The table's stream hands it every segment INSERT that carries a flag
 * (lib/adapters/dynamodb/dispatch-source.ts); it routes each segment to the
 * routes registered for the flags it carries and answers with the records
 * that failed, so the event source retries exactly those (and nothing that
 * succeeded before them is repeated on AWS, where it checkpoints before the
 * lowest failure).
 *
 * Routes by kind:
 *   `wake`   (`w`):  segments someone waits for — topic activity (ActivityRoute);
 *                    push jobs and doorbells will register here (design §7.3, §7.4);
 *   `notice` (`nf`): FIFO segments to announce on their notice lane — the
 *                    FIFO lane work registers its route here (design §4).
 * A route gets all segments of its kind in one call, so it can write once per
 * topic, lane or group per invocation rather than once per message.
 * Delivery is at least once and, across shards, unordered: routes are idempotent.
 */
import type { ChangeBatchResponse, ChangeRecord } from '../ports/change-stream.js';
import type { Clock } from '../ports/clock.js';
import { UnreadableSegmentError, segmentChangeOf, type SegmentChange } from '../adapters/dynamodb/segment-changes.js';

export const DispatchKind = {
  /** `w`: a waiter or push group needs to hear of the segment. */
  WAKE: 'wake',
  /** `nf`: the segment must be announced on a FIFO notice lane. */
  NOTICE: 'notice',
} as const;
export type DispatchKind = (typeof DispatchKind)[keyof typeof DispatchKind];

/** One thing the dispatcher does with the segments of a kind. */
export interface DispatchRoute {
  /** For logs. */
  readonly name: string;
  /**
   * Handles the segments of one invocation that carry this route's flag, at
   * time `now`. Resolves to the ids of the segments it could not handle (they
   * are retried; so is everything after them on AWS); throwing fails them all.
   * Must be idempotent: a segment may come again.
   */
  handle(segments: readonly SegmentChange[], now: number): Promise<readonly string[]>;
}

export type DispatchRoutes = { readonly [K in DispatchKind]?: readonly DispatchRoute[] };

export interface DispatchLog {
  warn(message: string, details: Record<string, unknown>): void;
  error(message: string, details: Record<string, unknown>): void;
}

const silent: DispatchLog = { warn: () => undefined, error: () => undefined };

const kindsOf = (segment: SegmentChange): DispatchKind[] => [
  ...(segment.wake ? [DispatchKind.WAKE] : []),
  ...(segment.noticeLane !== undefined ? [DispatchKind.NOTICE] : []),
];

export class Dispatcher {
  /** Segments this dispatcher skipped because their packed records do not read (logged with each). */
  unreadable = 0;

  constructor(
    private readonly routes: DispatchRoutes,
    private readonly clock: Clock,
    private readonly log: DispatchLog = silent,
  ) {}

  /** Handles one invocation's records (one shard's, oldest first); answers a partial batch response. */
  async dispatch(records: readonly ChangeRecord[]): Promise<ChangeBatchResponse> {
    const now = this.clock.now();
    const byKind = new Map<DispatchKind, SegmentChange[]>();
    const order = new Map<string, number>();
    records.forEach((record, index) => {
      let segment: SegmentChange | undefined;
      try {
        segment = segmentChangeOf(record);
      } catch (error) {
        if (!(error instanceof UnreadableSegmentError)) throw error;
        // A poison record: retrying would fail the same way and hold up the shard's later records
        // (push deliveries, wakes, notices) until it expires from the stream. Its messages are
        // unreadable for receives too; it is skipped, logged (where and why, no bytes) and counted.
        this.unreadable += 1;
        this.log.error('dispatcher skipped an unreadable segment', {
          stream: error.stream,
          seq: error.seq,
          messages: error.count,
          sequenceNumber: error.id,
          reason: error.reason,
          unreadableSegments: this.unreadable,
        });
        return;
      }
      if (!segment) {
        // Retrying cannot make it a segment: skip it rather than block the shard.
        this.log.warn('dispatcher skipped a change that is not a flagged segment insert', {
          eventName: record.eventName,
          sequenceNumber: record.dynamodb?.SequenceNumber,
        });
        return;
      }
      order.set(segment.id, index);
      for (const kind of kindsOf(segment)) byKind.set(kind, [...(byKind.get(kind) ?? []), segment]);
    });
    const failed = new Set<string>();
    const runs = [...byKind].flatMap(([kind, segments]) =>
      (this.routes[kind] ?? []).map(async (route) => {
        try {
          for (const id of await route.handle(segments, now)) failed.add(id);
        } catch (error) {
          this.log.error('dispatch route failed', { route: route.name, kind, segments: segments.length, error });
          for (const segment of segments) failed.add(segment.id);
        }
      }),
    );
    await Promise.all(runs);
    return {
      batchItemFailures: [...failed]
        .sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
        .map((itemIdentifier) => ({ itemIdentifier })),
    };
  }
}
