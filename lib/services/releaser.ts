/**
 * Deferred messages enter their streams here: scheduled messages when their
 * timer fires (TimerService), half messages when their transaction commits
 * (TransactionService). Each append is one transaction with the update that
 * records the message appended, so a message enters its stream once
 * (docs/design.md, Scheduled messages: Release; Transactional messages).
 */
import type { SendInput, MessageRecord } from '../domain/model.js';
import type { Deferred } from '../adapters/dynamodb/deferred.js';
import { ItemConditionFailedError, WriteBatch, type TransactItem } from '../adapters/dynamodb/write-batch.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Stores } from './stores.js';
import type { Outgoing, WritePlanner } from './write-planner.js';

/** Deferred messages appended per transaction (with their updates and FIFO notices, well within 100 items). */
const APPEND_BATCH = 10;

/** Where an appended message landed. */
export interface Address {
  stream: string;
  seq: number;
}

/** The name of a deferred item's update in a write batch. */
const deferredItem = (d: Deferred) => `deferred:${d.id}`;

export class DeferredReleaser {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly notifier: Notifier,
    private readonly planner: WritePlanner,
  ) {}

  /**
   * Releases scheduled messages that are due: each enters its stream now,
   * behind what accumulated before it. Appending and marking released are one
   * transaction, so a timer fired twice releases once. Returns how many it released.
   */
  async release(ids: string[]): Promise<number> {
    const now = this.clock.now();
    const due = (await Promise.all(ids.map((id) => this.stores.deferred.get(id)))).filter(
      (d): d is Deferred => d !== undefined && d.state === 'scheduled' && d.dueAt <= now,
    );
    const appended = await this.append(due, (d, address) => this.stores.deferred.releaseItem(d.id, address));
    return [...appended.values()].filter((a) => a !== undefined).length;
  }

  /**
   * Appends waiting messages to their streams, each with the update that
   * records it appended (released, committed), in transactions of up to
   * {@link APPEND_BATCH}. A message whose update fails its condition (resolved
   * meanwhile) is left out. Returns where each appended message landed; a
   * message of a deleted topic is dropped (as a send to a deleted topic would be).
   */
  async append(items: Deferred[], update: (d: Deferred, address: Address) => TransactItem): Promise<Map<string, Address | undefined>> {
    const now = this.clock.now();
    const out = new Map<string, Address | undefined>();
    const topics = await this.stores.catalog.topics(items.map((d) => d.topic));
    for (let i = 0; i < items.length; i += APPEND_BATCH) {
      let pending = items.slice(i, i + APPEND_BATCH);
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
        const addresses = new Map<string, Address>();
        try {
          await this.stores.log.appendMany(writes, (seqs) => {
            addresses.clear();
            for (const group of landed(seqs)) {
              group.records.forEach((r, j) => addresses.set(r.messageId, { stream: group.stream, seq: group.firstSeq + j }));
            }
            const batch = new WriteBatch();
            for (const l of live) batch.add(deferredItem(l.deferred), update(l.deferred, addresses.get(l.deferred.record.messageId) ?? { stream: '', seq: 0 }));
            return batch;
          });
        } catch (error) {
          if (!(error instanceof ItemConditionFailedError)) throw error;
          const gone = live.find((l) => deferredItem(l.deferred) === error.item)?.deferred;
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
}

/** A deferred record as the send input it came from (no delay: it is due now). */
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
