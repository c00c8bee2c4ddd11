/**
 * Visibility changes and commits: plain commits (one conditional update per
 * stream), commits with `publish` outputs (one transaction: the outputs exist
 * if and only if the commit took effect), and protected-mode commits that take
 * effect strictly in sequence (docs/design.md, Commit and FIFO).
 */
import { InvalidArgumentError, ReceiptHandleExpiredError, SluiceError } from '../domain/errors.js';
import { deliveriesOfToken, leasesInOrder, rangeOfToken, type Lease, type RangeOfLease } from '../domain/cursor.js';
import { normaliseRange } from './range-normaliser.js';
import { spillOnItsOwn } from './spill-on-its-own.js';
import { commitSpills, planSpill, repeatsCommit } from '../domain/history.js';
import { Limits, type Group, type SendInput, type Topic } from '../domain/model.js';
import { READY_NOW, guessedReadiness, readinessFor, retryReadiness } from '../domain/readiness.js';
import { isShardStream } from '../domain/streams.js';
import { retryDelayMs } from '../domain/retry-policy.js';
import type { MessageIdCodec, Receipt } from '../domain/message-ids.js';
import { ItemConditionFailedError, WriteBatch } from '../adapters/dynamodb/write-batch.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { Random } from '../ports/random.js';
import type { Timers } from '../ports/timers.js';
import type { ChunkReserve } from './append-chunks.js';
import { chunkOutputs, sizedOutput } from './output-chunks.js';
import { OutputPlanner, type OutputPlan } from './output-plan.js';
import { outputParts, type SavedOutputs } from '../adapters/dynamodb/pending-outputs.js';
import type { Stores } from './stores.js';
import type { Outgoing, WritePlanner } from './write-planner.js';

/** A send published atomically with a commit (consume-transform-produce). */
export interface PublishInput extends SendInput {
  topic: string;
}

export interface CommitEntry {
  receiptHandle: string;
  publish: PublishInput[];
}

export type CommitResult =
  | { receiptHandle: string; status: 'committed' | 'pending' }
  | { receiptHandle: string; error: SluiceError };

type Outcome = 'committed' | 'pending' | 'expired';

interface Item {
  index: number;
  receipt: Receipt;
  outgoing: Outgoing[];
  publish: PublishInput[];
}

/**
 * Most pending commits one protected cascade step completes (the cursor update's expression budget);
 * fewer when their outputs would not fit one transaction (the rest follow at once).
 */
const CASCADE_MAX = 20;
/** Room for the cursor item in a commit's transaction (its budget is 64 KB, cursor-updates.ts). */
const CURSOR_RESERVE: ChunkReserve = { items: 1, bytes: 128 * 1024 };
/** Bytes of a saved-outputs item besides its JSON (keys, TTL). */
const SAVED_OUTPUTS_OVERHEAD_BYTES = 1024;
/** Plans of one protected commit: each failed transaction (the cursor moved) reads the cursor and plans again. */
const PROTECTED_ATTEMPTS = 8;

/** Names of the items a commit writes besides its outputs (write-batch.ts). */
const CURSOR_ITEM = 'cursor';
const savedOutputsItem = (seq: number, part: number) => `outputs:${seq}:${part}`;
const spentOutputsItem = (seq: number, part: number) => `spent-outputs:${seq}:${part}`;

/** Opens a receipt handle; a malformed or forged one is a 400 naming where it was in the request. */
export function receiptAt(ids: MessageIdCodec, handle: string, path: string): Receipt {
  try {
    return ids.openReceipt(handle);
  } catch {
    throw new InvalidArgumentError(`${path} is not a receipt handle issued by Sluice.`, {
      issues: [{ path, message: 'malformed receipt handle' }],
    });
  }
}

/** The error of a commit whose handle is not the message's latest lease. */
export const expiredReceipt = () =>
  new ReceiptHandleExpiredError(
    'The lease of this receipt handle expired and the message was delivered again (or dead-lettered); only the latest receipt handle can commit.',
  );

export class Committer {
  private readonly outputs: OutputPlanner;

  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly notifier: Notifier,
    private readonly planner: WritePlanner,
    random: Random,
    private readonly timers: Timers,
  ) {
    this.outputs = new OutputPlanner(stores, random, planner);
  }

  /**
   * Extends a lease to `seconds` from now, or releases it with 0: a failed attempt, so the message
   * is claimable again after the group's retry back-off for the delivery the handle names (the
   * lease's expiry becomes that moment). An explicit `seconds` > 0 is taken as given, without back-off.
   * Resolves to the new expiry (ms): when the message is claimable again.
   */
  async changeVisibility(group: Group, receiptHandle: string, seconds: number, untried = false): Promise<number> {
    const receipt = (await this.stores.ids.codec()).openReceipt(receiptHandle);
    const now = this.clock.now();
    // A member of a range claim: the range is written out as ordinary leases first (docs/design.md, Range claims).
    const range = rangeOfToken(receipt.token);
    if (range && isShardStream(receipt.stream)) await normaliseRange(this.stores, group.name, receipt.stream, range, now);
    // Given back unattempted: no failed attempt, so no back-off and no delivery counted.
    const released = seconds === 0 && !untried;
    const backoff = released ? retryDelayMs(group.retryPolicy, deliveriesOfToken(receipt.token), group.maxDeliveries) : 0;
    const expiresAt = now + (seconds === 0 ? backoff : seconds * 1000);
    const ok = await this.stores.cursors.setVisibility(group.name, receipt.stream, receipt.seq, receipt.token, expiresAt, now, released, untried && seconds === 0);
    if (!ok) {
      throw new ReceiptHandleExpiredError(
        'This receipt handle is no longer the latest lease of its message (it was committed, redelivered or dead-lettered).',
      );
    }
    // Claimable at once: wake waiting receivers (a back-off's end is found by their next look).
    if (seconds === 0 && backoff === 0) this.notifier.notify(receipt.topic);
    return expiresAt;
  }

  async commit(group: Group, entries: CommitEntry[]): Promise<CommitResult[]> {
    const items = await this.validate(entries);
    const now = this.clock.now();
    const outcomes = new Map<number, Outcome>();
    const ranged = await this.commitRanges(group, items, now);
    for (const index of ranged) outcomes.set(index, 'committed');
    const byStream = new Map<string, Item[]>();
    for (const item of items.filter((i) => !ranged.has(i.index))) byStream.set(item.receipt.stream, [...(byStream.get(item.receipt.stream) ?? []), item]);
    await Promise.all(
      [...byStream].map(async ([stream, streamItems]) => {
        if (isShardStream(stream) && group.deliveryMode === 'protected') {
          for (const [index, outcome] of await this.completeProtected(group, stream, streamItems)) outcomes.set(index, outcome);
          return;
        }
        const plain = streamItems.filter((i) => i.outgoing.length === 0);
        if (plain.length > 0) {
          const results = await this.stores.cursors.commit(
            group.name,
            stream,
            plain.map((i) => ({ seq: i.receipt.seq, token: i.receipt.token })),
            now,
          );
          plain.forEach((item, j) => outcomes.set(item.index, results[j] ?? 'expired'));
        }
        for (const item of streamItems.filter((i) => i.outgoing.length > 0)) {
          outcomes.set(item.index, await this.commitWithOutputs(group, stream, item, now));
        }
      }),
    );
    for (const topic of new Set(items.flatMap((i) => i.outgoing.map((o) => o.topic.name)))) this.notifier.notify(topic);
    return entries.map((entry, index) => {
      const outcome = outcomes.get(index) ?? 'expired';
      return outcome === 'expired' ? { receiptHandle: entry.receiptHandle, error: expiredReceipt() } : { receiptHandle: entry.receiptHandle, status: outcome };
    });
  }

  /**
   * Range claims (docs/design.md, Range claims): the plain commit of every member of a range is one
   * write; any other use of a member's handle (some of the range, with outputs, protected mode) finds
   * the range written out as ordinary leases first and goes on as a commit of leases. The items
   * committed here.
   */
  private async commitRanges(group: Group, items: Item[], now: number): Promise<Set<number>> {
    const done = new Set<number>();
    const byRange = new Map<string, { stream: string; range: RangeOfLease; token: string; items: Item[] }>();
    for (const item of items) {
      const { stream, seq, token } = item.receipt;
      const range = rangeOfToken(token);
      if (!range || !isShardStream(stream) || seq < range.start || seq >= range.start + range.n) continue;
      const key = `${stream}\u0000${range.id}`;
      const entry = byRange.get(key) ?? { stream, range, token, items: [] };
      entry.items.push(item);
      byRange.set(key, entry);
    }
    await Promise.all(
      [...byRange.values()].map(async ({ stream, range, token, items: members }) => {
        const whole =
          group.deliveryMode !== 'protected' &&
          members.every((m) => m.outgoing.length === 0 && m.receipt.token === token) &&
          new Set(members.map((m) => m.receipt.seq)).size === range.n;
        const committed = whole ? await this.stores.cursors.commitRange(group.name, stream, range, token, now) : { committed: false };
        if (committed.committed) {
          for (const m of members) done.add(m.index);
          // Best effort: the commit took effect, and its answer says so whatever the spill meets (a
          // throttled history write); the next crossing commit, or a grant past 120, spills instead.
          if (committed.after && commitSpills(committed.after.done.size, range.n)) await spillOnItsOwn(this.stores, group.name, stream, committed.after, planSpill(committed.after), now).catch(() => undefined);
          return;
        }
        await normaliseRange(this.stores, group.name, stream, range, now);
      }),
    );
    return done;
  }

  /** Everything that can be checked before a write: handles, publish topics, sizes, shard keys. */
  private async validate(entries: CommitEntry[]): Promise<Item[]> {
    const total = entries.reduce((n, e) => n + e.publish.length, 0);
    if (total > Limits.publishPerCommitMax) {
      throw new InvalidArgumentError(`A commit may publish at most ${Limits.publishPerCommitMax} messages in all (this one: ${total}).`, {
        issues: [{ path: 'entries', message: 'too many publish entries' }],
      });
    }
    const ids = await this.stores.ids.codec();
    const topics = await this.stores.catalog.topics(entries.flatMap((e) => e.publish.map((p) => p.topic)));
    return entries.map((entry, i) => {
      const receipt = receiptAt(ids, entry.receiptHandle, `entries/${i}/receiptHandle`);
      const outgoing = entry.publish.map((p, j) => {
        const topic = topics.get(p.topic);
        if (!topic) {
          throw new InvalidArgumentError(`Topic '${p.topic}' of entries/${i}/publish/${j} does not exist.`, {
            issues: [{ path: `entries/${i}/publish/${j}/topic`, message: 'no such topic' }],
          });
        }
        return this.planner.route(topic, p, undefined, `entries/${i}/publish/${j}`);
      });
      return { index: i, receipt, outgoing, publish: entry.publish };
    });
  }

  /**
   * One commit and its outputs in one transaction; outputs that do not fit one
   * transaction go first in transactions of their own, in order, and the commit
   * with the last of them (docs/design.md, Split commits).
   */
  private async commitWithOutputs(group: Group, stream: string, item: Item, now: number): Promise<Outcome> {
    const entry = { seq: item.receipt.seq, token: item.receipt.token };
    const repeats = new Set<string>();
    const ids = await this.stores.ids.codec();
    const chunks = chunkOutputs(item.outgoing.map((o) => sizedOutput(o, now, ids, this.planner)), CURSOR_RESERVE);
    let last: Outgoing[];
    try {
      last = await this.writeLeading(chunks, now, ids, repeats, () =>
        new WriteBatch().add(CURSOR_ITEM, this.stores.cursors.leaseCheckItem(group.name, stream, entry, false)),
      );
    } catch (error) {
      if (!(error instanceof ItemConditionFailedError) || error.item !== CURSOR_ITEM) throw error;
      // A repeat of a commit that took effect, or a stale handle: nothing was published.
      return (await this.stores.cursors.classify(group.name, stream, entry, this.clock.now())) === 'committed' ? 'committed' : 'expired';
    }
    let plan = this.outputs.plan(last, now, ids, repeats);
    // FIFO: the ready-index write the claim guessed; when only that guess fails, decided from the cursor.
    let readiness = isShardStream(stream) ? guessedReadiness([entry.token]) : undefined;
    for (let attempt = 1; ; attempt++) {
      const batch = () =>
        new WriteBatch().add(
          CURSOR_ITEM,
          this.stores.cursors.completionItem(group.name, stream, { complete: [entry], now, ...(readiness ? { readiness } : {}) }),
        );
      try {
        await this.write(plan, batch);
        return 'committed';
      } catch (error) {
        // An output whose dedup id was sent before: it stores nothing new; write the commit without it.
        const repeat = error instanceof ItemConditionFailedError ? plan.repeatNamed(error.item) : undefined;
        if (repeat !== undefined) {
          repeats.add(repeat);
          plan = this.outputs.plan(last, now, ids, repeats);
          continue;
        }
        if (!(error instanceof ItemConditionFailedError) || error.item !== CURSOR_ITEM) throw error;
        // A repeat of a commit that took effect (its outputs exist already), or a stale handle.
        const cursor = readiness ? await this.stores.cursors.get(group.name, stream, this.clock.now()) : undefined;
        // A lease still ours and not gone pending: only the readiness guess failed.
        readiness = cursor && !cursor.leases.get(entry.seq)?.pending ? retryReadiness(cursor, [entry], attempt) : undefined;
        if (readiness) continue;
        const outcome = await this.stores.cursors.classify(group.name, stream, entry, this.clock.now());
        return outcome === 'committed' ? 'committed' : 'expired';
      }
    }
  }

  /**
   * Writes every chunk of outputs but the last, one transaction each, in order,
   * and returns the last (written with the commit by the caller). Each carries
   * `guard` (a check that the commit's lease is still held, named as the cursor item,
   * whose failure the caller answers as it answers a failed commit). An output whose
   * dedup id was sent before stores nothing new: its chunk is planned again without it.
   */
  private async writeLeading(
    chunks: Outgoing[][],
    now: number,
    ids: MessageIdCodec,
    repeats: Set<string>,
    guard: () => WriteBatch,
  ): Promise<Outgoing[]> {
    for (const chunk of chunks.slice(0, -1)) {
      for (;;) {
        const plan = this.outputs.plan(chunk, now, ids, repeats);
        try {
          await this.write(plan, guard);
          break;
        } catch (error) {
          const repeat = error instanceof ItemConditionFailedError ? plan.repeatNamed(error.item) : undefined;
          if (repeat === undefined) throw error;
          repeats.add(repeat);
        }
      }
    }
    return chunks.at(-1) ?? [];
  }

  /**
   * Outputs and the batch of cursor (and saved outputs) items, in one transaction; without stream
   * segments, the batch alone. `batch` is built afresh for each append attempt (its side items
   * name the sequence numbers the attempt took). Delayed outputs are armed once written.
   */
  private async write(plan: OutputPlan, batch: () => WriteBatch): Promise<void> {
    const build = (seqs: number[]) => {
      const built = batch();
      plan.addTo(built, seqs);
      return built;
    };
    if (plan.writes.length > 0) await this.stores.log.appendMany(plan.writes, build);
    else await this.stores.writer.write(build([]));
    // After the write, as a send does: a lost arm is caught up by the timer sweep.
    if (plan.wakes.length > 0) await this.timers.arm(plan.wakes);
  }

  /**
   * Protected mode: a commit takes effect only when every older message of
   * the shard is complete. Commits that arrive early are marked pending (their
   * outputs saved); the commit of the oldest lease completes it and every
   * pending commit right after it, publishing their outputs in sequence order,
   * in one transaction. With no items it only completes a pending chain.
   */
  async completeProtected(group: Group, stream: string, items: Item[]): Promise<Map<number, Outcome>> {
    // One handle named twice in a request is one commit (its first entry's outputs), answered twice:
    // two pending marks of one lease would write one path twice in one update (a ValidationException).
    const firsts = new Map<string, Item>();
    for (const item of items) if (!firsts.has(`${item.receipt.seq}:${item.receipt.token}`)) firsts.set(`${item.receipt.seq}:${item.receipt.token}`, item);
    const outcomes = await this.completeProtectedOnce(group, stream, [...firsts.values()]);
    for (const item of items) {
      const first = firsts.get(`${item.receipt.seq}:${item.receipt.token}`)!;
      if (first !== item) outcomes.set(item.index, outcomes.get(first.index) ?? 'expired');
    }
    return outcomes;
  }

  private async completeProtectedOnce(group: Group, stream: string, items: Item[]): Promise<Map<number, Outcome>> {
    const outcomes = new Map<number, Outcome>();
    const repeats = new Set<string>();
    for (let attempt = 0; attempt < PROTECTED_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      const cursor = await this.stores.cursors.get(group.name, stream, now);
      const candidates: Item[] = [];
      for (const item of items) {
        const lease = cursor?.leases.get(item.receipt.seq);
        if (lease && lease.token === item.receipt.token) {
          if (lease.pending) outcomes.set(item.index, 'pending');
          else candidates.push(item);
        } else {
          const done = cursor ? await this.stores.cursors.completionOf(cursor, item.receipt.seq) : undefined;
          outcomes.set(item.index, repeatsCommit(done, item.receipt.token) ? 'committed' : 'expired');
        }
      }
      if (!cursor) return outcomes;
      const bySeq = new Map(candidates.map((c) => [c.receipt.seq, c]));
      const leases = leasesInOrder(cursor);
      const chain: Lease[] = [];
      for (const lease of leases) {
        if (!lease.pending && !bySeq.has(lease.seq)) break;
        chain.push(lease);
      }
      // Outputs of each commit of the chain, in sequence order: from this request, or saved when it went pending.
      const reach = chain.slice(0, CASCADE_MAX);
      const earlierAll = reach.filter((l) => l.pending).map((l) => ({ seq: l.seq, token: l.token }));
      const saved = earlierAll.length ? await this.stores.outputs.get(group.name, stream, earlierAll) : new Map<number, SavedOutputs>();
      const ids = await this.stores.ids.codec();
      const perLease: Outgoing[][] = [];
      for (const lease of reach) {
        const fresh = bySeq.get(lease.seq);
        perLease.push(fresh ? fresh.outgoing : await this.reroute((saved.get(lease.seq)?.outputs ?? []) as PublishInput[]));
      }
      // Commits of this request past the chain's reach (or behind the blocker) go pending; those
      // within reach but past this step stay as they are and are completed by the next step.
      const reachSeqs = new Set(reach.map((l) => l.seq));
      const markPending = candidates.filter((c) => !reachSeqs.has(c.receipt.seq));
      const steps = this.cascadeStep(reach, perLease, markPending, saved, now, ids);
      const completing = reach.slice(0, steps);
      const completingSeqs = new Set(completing.map((l) => l.seq));
      const blocker = leases.find((l) => !l.pending && !bySeq.has(l.seq));
      if (completing.length === 0 && markPending.length === 0) return outcomes;

      const earlier = completing.filter((l) => l.pending).map((l) => l.seq);
      const outgoing = perLease.slice(0, completing.length).flat();
      // The ready index: decided from the cursor read (its conditions make a race plan again);
      // pending commits left at the head of the shard (a long chain) make it ready now.
      const head = leases.find((l) => !completingSeqs.has(l.seq));
      const readiness =
        chain.length > completing.length
          ? { ...READY_NOW }
          : { ...readinessFor(cursor, completing.length, attempt), ...(head ? { head: head.seq } : {}) };
      const batch = () => {
        const built = new WriteBatch().add(
          CURSOR_ITEM,
          this.stores.cursors.completionItem(group.name, stream, {
            complete: completing.map((l) => ({ seq: l.seq, token: l.token })),
            markPending: markPending.map((c) => ({ seq: c.receipt.seq, token: c.receipt.token })),
            ...(markPending.length > 0 && blocker ? { blocker: { seq: blocker.seq, token: blocker.token } } : {}),
            now,
            readiness,
          }),
        );
        for (const c of markPending.filter((c) => c.publish.length > 0)) {
          const ttl = Math.ceil(now / 1000) + Limits.retentionMaxSeconds;
          this.stores.outputs
            .putItems(group.name, stream, { seq: c.receipt.seq, token: c.receipt.token }, c.publish, ttl)
            .forEach((put, part) => built.add(savedOutputsItem(c.receipt.seq, part), put));
        }
        for (const seq of earlier) {
          this.stores.outputs
            .deleteItems(group.name, stream, seq, saved.get(seq)?.parts ?? 0)
            .forEach((del, part) => built.add(spentOutputsItem(seq, part), del));
        }
        return built;
      };
      // Outputs of one commit too large for one transaction go first (writeLeading); the step's last chunk goes with the cursor.
      const chunks = chunkOutputs(outgoing.map((o) => sizedOutput(o, now, ids, this.planner)), this.stepReserve(completing, markPending, saved));
      const first = completing[0];
      const guard = () =>
        first ? new WriteBatch().add(CURSOR_ITEM, this.stores.cursors.leaseCheckItem(group.name, stream, first, first.pending)) : new WriteBatch();
      let plan: OutputPlan | undefined;
      try {
        plan = this.outputs.plan(await this.writeLeading(chunks, now, ids, repeats, guard), now, ids, repeats);
        await this.write(plan, batch);
      } catch (error) {
        // The cursor moved (a token, the blocker or the readiness condition): plan again.
        if (error instanceof ItemConditionFailedError && error.item === CURSOR_ITEM) continue;
        // An output whose dedup id was sent before stores nothing new: plan again without it.
        const repeat = error instanceof ItemConditionFailedError && plan ? plan.repeatNamed(error.item) : undefined;
        if (repeat === undefined) throw error;
        repeats.add(repeat);
        attempt--;
        continue;
      }
      for (const c of candidates) {
        if (completingSeqs.has(c.receipt.seq)) outcomes.set(c.index, 'committed');
        else if (!reachSeqs.has(c.receipt.seq)) outcomes.set(c.index, 'pending');
      }
      for (const o of outgoing) this.notifier.notify(o.topic.name);
      if (chain.length > completing.length) {
        // A long chain: complete the rest now. A step that took effect is progress, not a failed attempt.
        attempt--;
        continue;
      }
      return outcomes;
    }
    return outcomes;
  }

  /**
   * How many commits of `reach` one cascade step completes: the most whose
   * outputs fit one transaction with the cursor item and the saved-outputs items
   * written or deleted with them; at least one (its outputs are then split).
   */
  private cascadeStep(
    reach: Lease[],
    perLease: Outgoing[][],
    markPending: Item[],
    saved: Map<number, SavedOutputs>,
    now: number,
    ids: MessageIdCodec,
  ): number {
    const sized = perLease.map((outputs) => outputs.map((o) => sizedOutput(o, now, ids, this.planner)));
    let steps = Math.min(1, reach.length);
    for (let k = 2; k <= reach.length; k++) {
      const chunks = chunkOutputs(sized.slice(0, k).flat(), this.stepReserve(reach.slice(0, k), markPending, saved));
      if (chunks.length > 1) break;
      steps = k;
    }
    return steps;
  }

  /** Room a cascade step keeps for its cursor item and the saved-outputs items it puts (pending marks) or deletes. */
  private stepReserve(completing: Lease[], markPending: Item[], saved: Map<number, SavedOutputs>): ChunkReserve {
    // Each saved-outputs part put or deleted: its JSON and keys.
    const parts = [
      ...markPending.filter((c) => c.publish.length > 0).flatMap((c) => outputParts(c.publish)),
      ...completing.flatMap((l) => {
        const s = saved.get(l.seq);
        return l.pending && s ? outputParts(s.outputs) : [];
      }),
    ];
    return {
      items: CURSOR_RESERVE.items + parts.length,
      bytes: CURSOR_RESERVE.bytes + parts.reduce((sum, part) => sum + Buffer.byteLength(part) + SAVED_OUTPUTS_OVERHEAD_BYTES, 0),
    };
  }

  /** Saved publish inputs of a pending commit, routed again (their topics may have changed meanwhile). */
  private async reroute(publish: PublishInput[]): Promise<Outgoing[]> {
    const topics = await this.stores.catalog.topics(publish.map((p) => p.topic));
    return publish.flatMap((p) => {
      const topic: Topic | undefined = topics.get(p.topic);
      // A topic deleted while the commit was pending: its outputs go nowhere, like sends to a deleted topic.
      return topic ? [this.planner.route(topic, p, undefined, '', { admitted: true })] : [];
    });
  }
}
