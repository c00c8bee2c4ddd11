/**
 * Deferred messages enter their streams here: scheduled messages when their
 * timer fires (TimerService), half messages when their transaction commits
 * (TransactionService). On FIFO topics each append is one transaction with
 * the update that records the message appended; on standard topics a claim,
 * a segment put and a mark (claimed-release.ts). Either way a message enters
 * its stream once (docs/design.md, Scheduled messages: Release; Transactional
 * messages: Commit).
 */
import type { SendInput, MessageRecord, Topic } from '../domain/model.js';
import { ThrottledError, UnavailableError } from '../domain/errors.js';
import { noticeStreamOf, partitionOf, streamId } from '../domain/streams.js';
import type { Deferred } from '../adapters/dynamodb/deferred.js';
import { valueBytes } from '../adapters/dynamodb/item-size.js';
import { toStored } from '../adapters/dynamodb/records.js';
import { ItemConditionFailedError, WriteBatch, type TransactItem } from '../adapters/dynamodb/write-batch.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { DueWake } from '../ports/timers.js';
import { chunkAppends, noticeBytes, type SizedAppend } from './append-chunks.js';
import { commitSteps, releaseSteps } from './claim-steps.js';
import { CLAIM_TAKEOVER_MS, ClaimedRelease, LEFT, type ClaimedAppend } from './claimed-release.js';
import type { Stores } from './stores.js';
import type { Outgoing, WritePlanner } from './write-planner.js';

/** Room a deferred item takes besides its record (state, topic, times, index keys, transaction attributes). */
const DEFERRED_OVERHEAD_BYTES = 1024;
/** Room a released record may take beyond the stored deferred record (its new deliverable time). */
const RECORD_MARGIN_BYTES = 64;
/** A scheduled message that could not be released is tried again by the sweep after this long. */
export const RELEASE_RETRY_MS = 60_000;

/** Where an appended message landed. */
export interface Address {
  stream: string;
  seq: number;
}

/** What an append did with each message. */
export interface AppendOutcome {
  /** Where each appended message landed; undefined: left out (resolved meanwhile, or its topic is gone). */
  landed: Map<string, Address | undefined>;
  /** Messages that could not be appended even alone, with the error (the caller logs and retries them later). */
  failed: Map<string, unknown>;
}

/** Logs what went wrong (the default says nothing). */
export type ReleaseLog = (message: string, details: Record<string, unknown>) => void;

/** The name of a deferred item's update in a write batch. */
const deferredItem = (d: Deferred) => `deferred:${d.id}`;

/** Errors that say "busy" or "unavailable": the whole call is retried, no message is to blame. */
const isTransient = (error: unknown) => error instanceof ThrottledError || error instanceof UnavailableError;

interface Planned {
  deferred: Deferred;
  outgoing: Outgoing;
}

/** Deliverable time, then send time, then id: the order scheduled messages of one shard enter it. */
const byDeliverableTime = (a: Deferred, b: Deferred): number => a.dueAt - b.dueAt || a.record.sentAt - b.record.sentAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A scheduled message to release without a transaction, with the claim it takes over (ClaimedAppend). */
type ToClaim = Pick<ClaimedAppend, 'deferred' | 'token' | 'slot'>;

export class DeferredReleaser {
  private readonly claimed: ClaimedRelease;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly notifier: Notifier,
    private readonly planner: WritePlanner,
    private readonly log: ReleaseLog = () => {},
  ) {
    this.claimed = new ClaimedRelease(stores, clock, notifier, planner, releaseSteps(stores.deferred));
  }

  /**
   * Releases scheduled messages that are due: each enters its stream now,
   * behind what accumulated before it — FIFO messages by deliverable time,
   * then send time, others in the order of `ids`. Appending and
   * marking released are one transaction, so a timer fired twice releases
   * once. A message that cannot be released (unreadable, or its append fails
   * alone) is logged with its id and moved in the due index to the next
   * sweep; it never stops the others. Busy or unavailable errors are thrown
   * (the wake-up is retried). Returns how many it released.
   */
  async release(ids: string[]): Promise<number> {
    return (await this.releaseDue(ids)).released;
  }

  /**
   * {@link release}, also answering the messages of `ids` still scheduled but
   * not due yet (a wake-up that came early waits for them or re-arms them).
   * Reads the deferred items by key, strongly consistent (one BatchGet per 100).
   */
  async releaseDue(ids: string[]): Promise<{ released: number; pending: DueWake[] }> {
    const now = this.clock.now();
    const { found, unreadable } = await this.stores.deferred.getMany(ids);
    const failed = new Map<string, unknown>(unreadable);
    const byId = new Map(found.map((d) => [d.id, d]));
    const read = ids.map((id) => byId.get(id));
    const due = [...new Set(read.filter((d): d is Deferred => d !== undefined && d.state === 'scheduled' && d.dueAt <= now))];
    const releasing = [...new Set(read.filter((d): d is Deferred => d !== undefined && d.state === 'releasing'))];
    const pending = found.filter((d) => d.state === 'scheduled' && d.dueAt > now).map((d) => ({ id: d.id, dueAt: d.dueAt }));
    const topics = await this.stores.catalog.topics([...due, ...releasing].map((d) => d.topic));
    // FIFO messages keep the transaction: their notice must enter with their segment. They enter
    // their shards in deliverable-time order, then send order (SPEC, "Deliverable time"), however
    // their wake-ups came (one per send, in any order, all of a second released together).
    const fifo = due.filter((d) => topics.get(d.topic)?.type === 'fifo').sort(byDeliverableTime);
    const toClaim: ToClaim[] = due.filter((d) => topics.get(d.topic)?.type !== 'fifo').map((deferred) => ({ deferred }));
    let released = 0;
    const left: string[] = [];
    // Claims a crash or a race left: finished, taken over, or left to their claimant.
    for (const d of releasing) {
      try {
        const settled = await this.claimed.settle(d, now);
        if (settled.kind === 'landed') released++;
        else if (settled.kind === 'left') left.push(d.id);
        else if (settled.kind === 'expired') this.log('scheduled message release left unfinished past its retention: closed as expired (delivered at most once, perhaps never)', { id: d.id, messageId: `d${d.id}` });
        else toClaim.push({ deferred: d, token: settled.token, slot: settled.slot });
      } catch (error) {
        if (isTransient(error)) throw error;
        failed.set(d.id, error);
      }
    }
    const outcome = await this.append(fifo, (d, address) => this.stores.deferred.releaseItem(d.id, address));
    const free = await this.appendClaimed(toClaim);
    for (const [id, error] of [...outcome.failed, ...free.failed]) failed.set(id, error);
    released += [...outcome.landed.values(), ...free.landed.values()].filter((a) => a !== undefined).length;
    for (const id of [...left, ...free.left]) {
      // Its claimant may still be at work: the sweep looks again after the claim's bound.
      this.log('scheduled message claimed by a release under way; the sweep looks again', { id, messageId: `d${id}` });
      await this.stores.deferred.retryLater(id, now + RELEASE_RETRY_MS);
    }
    for (const [id, error] of failed) {
      const retryAt = now + RELEASE_RETRY_MS;
      this.log('scheduled message not released; the sweep retries it', {
        id,
        messageId: `d${id}`,
        retryAt: new Date(retryAt).toISOString(),
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      await this.stores.deferred.retryLater(id, retryAt);
    }
    return { released, pending };
  }

  /**
   * Commits a half message of a standard topic without a transaction
   * (claimed-release.ts with the commit's steps): claims it, puts it, marks it
   * committed — or, found `committing` (a commit under way, or left by a
   * crash), finishes that claim. Where it landed; undefined: not appended (it
   * was resolved meanwhile, or its topic is gone); {@link LEFT}: a claim under
   * way that is not its to finish yet. A claim past its records' expiry is
   * closed as expired (logged) and answered undefined: the caller reads the
   * item again and answers from its state.
   */
  async commitClaimed(half: Deferred, by: string): Promise<Address | undefined | typeof LEFT> {
    const claimed = new ClaimedRelease(this.stores, this.clock, this.notifier, this.planner, commitSteps(this.stores.deferred, by, CLAIM_TAKEOVER_MS));
    let item: ToClaim = { deferred: half };
    if (half.state === 'committing') {
      const settled = await claimed.settle(half, this.clock.now());
      if (settled.kind === 'landed') return settled.address;
      if (settled.kind === 'left') return LEFT;
      if (settled.kind === 'expired') {
        this.log('half message commit left unfinished past its retention: closed as expired (delivered at most once, perhaps never)', { id: half.id, messageId: `d${half.id}` });
        return undefined;
      }
      item = { deferred: half, token: settled.token, slot: settled.slot };
    }
    const outcome = await this.appendClaimed([item], claimed);
    const failed = outcome.failed.get(half.id);
    if (failed !== undefined || outcome.failed.has(half.id)) throw failed;
    return outcome.left.includes(half.id) ? LEFT : outcome.landed.get(half.id);
  }

  /**
   * Appends deferred messages of standard topics without a transaction
   * (claimed-release.ts; by default the release of scheduled messages): split
   * as {@link append} splits, then one claimed append per stream. A message
   * its topic no longer takes (deleted; a scheduled message sent before a
   * purge) is dropped, or its claim closed (claim-steps.ts). A stream's
   * messages that fail for another reason than "busy" are tried one by one,
   * so one bad message is isolated in `failed`.
   */
  private async appendClaimed(items: ToClaim[], claimed = this.claimed): Promise<AppendOutcome & { left: string[] }> {
    const landed = new Map<string, Address | undefined>();
    const failed = new Map<string, unknown>();
    const left: string[] = [];
    if (items.length === 0) return { landed, failed, left };
    const topics = await this.stores.catalog.topics(items.map((i) => i.deferred.topic));
    const sized: Array<SizedAppend<ClaimedAppend>> = [];
    for (const item of items) {
      const d = item.deferred;
      const topic = topics.get(d.topic);
      if (claimed.steps.dropped(d, topic)) {
        if (item.token === undefined) await claimed.steps.drop(d);
        else await claimed.steps.close(d.id, item.token);
        landed.set(d.id, undefined);
        continue;
      }
      try {
        // A claim taken over for its own slot stays on the slot's partition (claimed-release.ts).
        const s = this.size(topic!, d, item.slot ? partitionOf(item.slot.stream, topic!.name) : undefined);
        sized.push({ ...s, item: { ...item, outgoing: s.item.outgoing } });
      } catch (error) {
        if (isTransient(error)) throw error;
        failed.set(d.id, error);
      }
    }
    // A chunk's streams side by side (each its own claims, put and marks), chunks one after the other.
    const queue: Array<Array<[string, ClaimedAppend[]]>> = chunkAppends(sized).map((chunk) => {
      const byStream = new Map<string, ClaimedAppend[]>();
      for (const s of chunk) byStream.set(s.stream, [...(byStream.get(s.stream) ?? []), s.item]);
      return [...byStream.entries()];
    });
    while (queue.length > 0) {
      const groups = queue.shift()!;
      const results = await Promise.allSettled(groups.map(([stream, group]) => claimed.append(stream, group)));
      const transient = results.find((r): r is PromiseRejectedResult => r.status === 'rejected' && isTransient(r.reason));
      const alone: Array<[string, ClaimedAppend[]]> = [];
      results.forEach((result, i) => {
        const [stream, group] = groups[i]!;
        if (result.status === 'fulfilled') {
          for (const [id, where] of result.value) {
            if (where === LEFT) left.push(id);
            else landed.set(id, where);
          }
        } else if (!isTransient(result.reason)) {
          if (group.length > 1) alone.push(...group.map((g): [string, ClaimedAppend[]] => [stream, [g]]));
          else failed.set(group[0]!.deferred.id, result.reason);
        }
      });
      if (transient) throw transient.reason;
      if (alone.length > 0) queue.unshift(...alone.map((g) => [g]));
    }
    return { landed, failed, left };
  }

  /**
   * Appends waiting messages to their streams, each with the update that
   * records it appended (released, committed), in transactions split by
   * stored size and DynamoDB's transaction limits (append-chunks.ts). A
   * message whose update fails its condition (resolved meanwhile) is left
   * out; a message of a deleted topic is dropped (as a send to a deleted
   * topic would be). When a transaction fails for another reason than
   * "busy", its messages are tried one by one, so one bad message is
   * isolated: it lands in `failed` and the others are appended.
   */
  async append(items: Deferred[], update: (d: Deferred, address: Address) => TransactItem): Promise<AppendOutcome> {
    const landed = new Map<string, Address | undefined>();
    const failed = new Map<string, unknown>();
    const topics = await this.stores.catalog.topics(items.map((d) => d.topic));
    const sized: Array<SizedAppend<Planned>> = [];
    for (const d of items) {
      const topic = topics.get(d.topic);
      if (!topic || topic.generation !== d.record.generation) {
        if (d.state === 'scheduled') await this.stores.deferred.cancel(d.id, d.topic); // its topic was deleted meanwhile
        landed.set(d.id, undefined);
        continue;
      }
      // A purge of the topic cancels the scheduled messages sent before it (half messages stay).
      if (d.state === 'scheduled' && topic.purgedAt !== undefined && d.record.sentAt <= topic.purgedAt) {
        await this.stores.deferred.cancel(d.id, d.topic);
        landed.set(d.id, undefined);
        continue;
      }
      try {
        sized.push(this.size(topic, d));
      } catch (error) {
        if (isTransient(error)) throw error;
        failed.set(d.id, error);
      }
    }
    const queue = chunkAppends(sized).map((chunk) => chunk.map((s) => s.item));
    while (queue.length > 0) {
      const chunk = queue.shift()!;
      try {
        for (const [id, address] of await this.appendChunk(chunk, update)) landed.set(id, address);
      } catch (error) {
        if (isTransient(error)) throw error;
        if (chunk.length > 1) queue.unshift(...chunk.map((p) => [p]));
        else failed.set(chunk[0]!.deferred.id, error);
      }
    }
    return { landed, failed };
  }

  /** A deferred message routed to its stream, with its stored size. */
  private size(topic: Topic, d: Deferred, partition?: number): SizedAppend<Planned> {
    // Admitted when it was sent: the size checks passed then (and are not made again after an upgrade).
    const routed = this.planner.route(topic, inputOf(d.record), partition, '', { admitted: true });
    const outgoing: Outgoing = { ...routed, messageId: d.record.messageId, sentAt: d.record.sentAt };
    const recordBytes = 1 + valueBytes(toStored(d.record)) + RECORD_MARGIN_BYTES;
    const local = outgoing.local;
    return {
      item: { deferred: d, outgoing },
      stream: streamId(topic, local),
      notice:
        local.kind === 'shard'
          ? { stream: noticeStreamOf(topic, local.shardKey), bytes: noticeBytes(local.shardKey) }
          : undefined,
      recordBytes,
      companionBytes: recordBytes + DEFERRED_OVERHEAD_BYTES,
    };
  }

  /** One transaction (retried without messages resolved meanwhile). Returns where each message landed. */
  private async appendChunk(chunk: Planned[], update: (d: Deferred, address: Address) => TransactItem): Promise<Map<string, Address | undefined>> {
    const out = new Map<string, Address | undefined>();
    let live = chunk;
    while (live.length > 0) {
      const now = this.clock.now();
      // Released messages keep their deferred ids (d<ULID>): no message-id key needed.
      const { writes, landed } = this.planner.writes(live.map((l) => l.outgoing), now, true, undefined);
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
        if (!gone) throw error;
        out.set(gone.id, undefined);
        live = live.filter((l) => l.deferred !== gone); // resolved meanwhile
        continue;
      }
      for (const l of live) out.set(l.deferred.id, addresses.get(l.deferred.record.messageId));
      for (const topic of new Set(live.map((l) => l.outgoing.topic.name))) this.notifier.notify(topic);
      live = [];
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
