/**
 * The conditional updates of a cursor item (cursor-item.ts), as pure
 * functions: what to change and the condition that makes the change right
 * (docs/design.md, Receive, Commit and Ready index). cursors.ts sends them.
 *
 * Every change is conditional: a claim on the `nx` it read and on the token
 * of every lease it renews or closes; a commit or visibility change on its
 * own lease token; a FIFO ready-index change also on the cursor state that
 * justifies it. Claims and commits of different messages therefore never
 * conflict.
 */
import { completionEpoch, deliveriesOfToken, type CursorState, type DoneEntry, type Lease, type RangeOfLease } from '../../domain/cursor.js';
import { READY_NOW, type CommitReadiness } from '../../domain/readiness.js';
import { isShardStream } from '../../domain/streams.js';
import { memberOf, runKey, runOfKey, shardCursorTtl, storedDone, storedLease, storedRanges, storedRun, toItem } from './cursor-item.js';
import { itemBytes } from './item-size.js';
import { readyAtKey, readyIndexPk, readyNowKey } from './keys.js';
import type { ReadyKeyChange } from './ready-index.js';

/** An update of one item: the parts of an UpdateItem request (or a transaction's Update). */
export interface UpdateParts {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * DynamoDB refuses an expression string longer than 4 KB (4,096 bytes, measured
 * as sent, placeholders unsubstituted). Every cursor write built here keeps
 * its UpdateExpression and its ConditionExpression each within this budget,
 * by construction: the planner cuts what does not fit (docs/design.md, Limits
 * by construction).
 */
export const EXPRESSION_BUDGET_BYTES = 4000;

/** Bytes of an expression string as DynamoDB counts them. */
export const expressionBytes = (expression: string): number => Buffer.byteLength(expression, 'utf8');

/** Whether both expressions of an update are within {@link EXPRESSION_BUDGET_BYTES}. */
export const fitsExpressionBudget = (parts: UpdateParts): boolean =>
  expressionBytes(parts.UpdateExpression) <= EXPRESSION_BUDGET_BYTES && expressionBytes(parts.ConditionExpression) <= EXPRESSION_BUDGET_BYTES;

/**
 * Builds update expressions with short placeholders, because their length
 * is what the 4 KB limit counts: `#f`/`#d` for the lease and completion maps,
 * `#<i>` for a sequence number (one per message, reused by every clause that
 * names it), `:<i>` for a value.
 */
class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private names_ = 0;
  private values_ = 0;
  private readonly byName = new Map<string, string>();
  private fixed(placeholder: string, name: string): string {
    this.names[placeholder] = name;
    return placeholder;
  }
  /** The lease map `fl`. */
  get fl(): string {
    return this.fixed('#f', 'fl');
  }
  /** The completion map `dn`. */
  get dn(): string {
    return this.fixed('#d', 'dn');
  }
  /** The range map `fr` (range claims: id → start). */
  get fr(): string {
    return this.fixed('#R', 'fr');
  }
  /** The range map `fq` (range claims: id → {n, e}). */
  get fq(): string {
    return this.fixed('#Q', 'fq');
  }
  /** A placeholder for an attribute name; created on first use so that no name goes unused. */
  name(name: string): string {
    let key = this.byName.get(name);
    if (key === undefined) {
      key = `#${this.names_++}`;
      this.byName.set(name, key);
      this.names[key] = name;
    }
    return key;
  }
  value(value: unknown): string {
    const key = `:${this.values_++}`;
    this.values[key] = value;
    return key;
  }
}

/**
 * The condition that a FIFO shard cursor has not expired (docs/design.md, Idle shards expire):
 * no write acts on a cursor past its `ttl`, which TTL may delete at any time. Cursors of earlier
 * versions have no `ttl` and are live. `#t` names `ttl` (a reserved word).
 */
export const LIVE_CURSOR = '(attribute_not_exists(#t) OR #t > :ls)';
/** The values of {@link LIVE_CURSOR} at `now` (ms). */
const liveValues = (now: number) => ({ ':ls': Math.floor(now / 1000) });

/** The completion a commit of the lease `(seq, token)` at `now` leaves in `dn` (the token's random part is not kept). */
const committedDone = (seq: number, token: string, now: number): DoneEntry => ({
  seq,
  token,
  at: now,
  outcome: 'committed',
  deliveries: deliveriesOfToken(token),
  ...completionEpoch(token),
});

const updateExpression = (sets: string[], removes: string[], adds = ''): string =>
  `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}${adds}`;

/** The condition that a cursor holds exactly the ranges among `leases` (`fq` compared as a map; none: absent or empty). */
const rangesAsRead = (x: Expr, leases: ReadonlyMap<number, Lease>): string => {
  const ranges = storedRanges(leases);
  return ranges === undefined ? `(attribute_not_exists(${x.fq}) OR size(${x.fq}) = ${x.value(0)})` : `${x.fq} = ${x.value(ranges.fq)}`;
};

export interface ClaimChange {
  /** The `nx` the plan was made from. */
  expectNext: number;
  next: number;
  segmentStart: number;
  /** New or renewed leases; renewals name the lease (as read) they replace. */
  grant: Array<{ lease: Lease; replaces: Lease | undefined }>;
  /** Leases to close without delivery (message expired), with the lease (as read) that must still be there. */
  close: Array<{ done: DoneEntry; replaces: Lease }>;
  /** Keys of `dn` to remove (cursor-item.ts `completionKeys`): completions spilled into history items, written before this update (lib/domain/history.ts). */
  forgetDone: string[];
  /**
   * Commits carried by the receive, folded into its claim (docs/design.md, Carried commits): each
   * lease leaves `fl` for `dn` as `committed`, conditional on its token, as a plain commit would.
   */
  commit?: { entries: Array<{ seq: number; token: string }>; now: number };
  /** With a spill: the history mark moves from what the plan read (the condition) to the end of the spilled chunk. */
  history?: { expectMark: number | undefined; mark: number };
  /**
   * The seek epoch `se` the plan read (undefined: absent), as a condition. A plan made from a
   * cursor read before a seek (a cursor cache entry: partitions and FIFO shards) fails even when the
   * seek and later claims brought `nx` back to the value it read (leases of the old epoch would
   * otherwise be granted after the seek; docs/design.md, the cursor cache).
   */
  seekEpoch?: { expect: number | undefined };
  /** The cursor read had `nl` (range claims moved `nx` without `ns`): this claim's `ns` is exact again. */
  clearsLag?: boolean;
  /**
   * FIFO shard cursors only: the new known head, guarded by what the plan read;
   * `index` when the ready-index key changes. Without it `g1pk`/`g1sk` are not written at all.
   */
  shard?: {
    expectKnown: number | undefined;
    expectInFlight: number;
    /**
     * The whole lease map as the plan read it (`fl = :fl`; receive always sets it; without it only
     * `size(fl) = expectInFlight` is checked). A
     * visibility change of another container (a release, a shortened lease) moves neither `nx`, `kn`
     * nor the number of leases, and with the `keep` variant not the ready-index key either; a plan
     * that missed it would deliver past a message waiting out its back-off (ordered modes) and move
     * the ready-index entry to the stale expiry.
     */
    expectLeases?: ReadonlyMap<number, Lease>;
    known: number;
    /**
     * A claim of a concurrent group that changes neither the shard's readiness (no `index`, no
     * `rekey`) nor its known head (`known` = `expectKnown`): conditional on the visibility count `vv`
     * and on the ready-index key `g1sk`, both as the plan read them (undefined: absent), instead of
     * `kn` and the whole lease map, and `kn` is not written. The key: another claim may have moved the
     * entry later from a lease map without this claim's new lease (a review's probe). A commit made
     * meanwhile no longer makes it lose (docs/design.md, "Commits pass claims"): what the plan took
     * from the leases a commit removed only holds back (fewer leases granted, an earlier spill mark),
     * and a renewal or a close still names its lease exactly.
     */
    passCommits?: { visibilityVersion: number | undefined; readyKey: string | undefined };
    index?: ReadyKeyChange;
    /**
     * A notice raise this claim absorbs puts the shard under another ready-index key than its `rk`
     * (a wide topic's cursor of an earlier version, or a topic created again with other notice
     * streams): `rk` and, when there is an entry, `g1pk` move to it.
     */
    rekey?: ReadyRekey;
    /** When the claim is written (ms): the cursor must be live then, and its `ttl` moves on from it. */
    now: number;
    /**
     * A notice this claim absorbs announced a new epoch starting here (`ke`, for statistics), as
     * {@link raiseKnownUpdate} would note it: set only with a `known` above `expectKnown`.
     */
    epochStart?: number;
  };
}

/**
 * What every write of a shard's ready-index entry but a notice raise's sets `g1pk` to: the cursor's
 * own key `rk` (wide FIFO topics: its bucket, keys.ts `readyBucketPk`) if it has one, else `home`, the
 * placeholder of the group's home key `R#<group>` — so no write needs the topic, and cursors of
 * earlier versions (no `rk`) keep the key receives read them under (docs/design.md, Ready index).
 */
const readyPkOf = (home: string): string => `if_not_exists(rk, ${home})`;

/**
 * The ready-index partition key a notice raise puts a shard under (`rk`), from the notice stream
 * that announced it: `pk` a wide topic's bucket key, undefined the home key (and no `rk`).
 */
export interface ReadyRekey {
  pk: string | undefined;
  /** The claim leaves the shard's existing entry as it is (no index change): its `g1pk` moves too. */
  entry: boolean;
}

/** A claim plan (lib/domain/claims.ts) as one update: conditional on `nx` and on every lease it replaces. */
export function claimUpdate(group: string, change: ClaimChange): UpdateParts {
  const x = new Expr();
  const sets = [`nx = ${x.value(change.next)}`, `ns = ${x.value(change.segmentStart)}`];
  const removes: string[] = [];
  const conditions = [`nx = ${x.value(change.expectNext)}`];
  const fl = () => x.fl;
  const dn = () => x.dn;
  for (const { lease, replaces } of change.grant) {
    const seq = x.name(String(lease.seq));
    sets.push(`${fl()}.${seq} = ${x.value(storedLease(lease))}`);
    // A renewal replaces the lease the plan read, exactly as read (one comparison of the whole
    // map: its token, not committed meanwhile — protected mode marks a committed lease pending,
    // keeping its token — and no visibility change since). Half the bytes of a token and a flag check.
    if (replaces !== undefined) conditions.push(`${fl()}.${seq} = ${x.value(storedLease(replaces))}`);
  }
  for (const { done, replaces } of change.close) {
    const seq = x.name(String(done.seq));
    removes.push(`${fl()}.${seq}`);
    sets.push(`${dn()}.${seq} = ${x.value(storedDone(done))}`);
    conditions.push(`${fl()}.${seq} = ${x.value(storedLease(replaces))}`);
  }
  for (const key of change.forgetDone) removes.push(`${dn()}.${x.name(key)}`);
  if (change.clearsLag) removes.push('nl');
  const commits = change.commit?.entries ?? [];
  for (const { seq, token } of commits) {
    const s = x.name(String(seq));
    removes.push(`${fl()}.${s}`);
    sets.push(`${dn()}.${s} = ${x.value(storedDone(committedDone(seq, token, change.commit?.now ?? 0)))}`);
    conditions.push(`${fl()}.${s}.k = ${x.value(token)}`);
  }
  if (change.seekEpoch) {
    const { expect } = change.seekEpoch;
    conditions.push(expect === undefined ? 'attribute_not_exists(se)' : `se = ${x.value(expect)}`);
  }
  if (change.history) {
    // One spill per mark: a racing spill moved it, or this one's chunk is not the one at the mark.
    sets.push(`hw = ${x.value(change.history.mark)}`);
    conditions.push(change.history.expectMark === undefined ? 'attribute_not_exists(hw)' : `hw = ${x.value(change.history.expectMark)}`);
  }
  if (change.shard?.passCommits) {
    // No visibility change since the plan (a release holds an ordered shard back; planClaims), and
    // the ready-index entry where the plan left it (commits on a shard ready now leave it there).
    const { visibilityVersion, readyKey } = change.shard.passCommits;
    conditions.push(
      visibilityVersion === undefined ? 'attribute_not_exists(vv)' : `vv = ${x.value(visibilityVersion)}`,
      readyKey === undefined ? 'attribute_not_exists(g1sk)' : `g1sk = ${x.value(readyKey)}`,
    );
  } else if (change.shard) {
    const { shard } = change;
    sets.push(`kn = ${x.value(shard.known)}`);
    if (shard.epochStart !== undefined) sets.push(`ke = ${x.value(shard.epochStart)}`);
    if (shard.index) {
      const { from, to } = shard.index;
      if (to === undefined) removes.push('g1pk', 'g1sk');
      else {
        const pk = shard.rekey ? x.value(shard.rekey.pk ?? readyIndexPk(group)) : readyPkOf(x.value(readyIndexPk(group)));
        sets.push(`g1pk = ${pk}`, `g1sk = ${x.value(to)}`);
      }
      // Nobody (a visibility change) moved the entry since it was read.
      conditions.push(from === undefined ? 'attribute_not_exists(g1sk)' : `g1sk = ${x.value(from)}`);
    } else if (shard.rekey?.entry) sets.push(`g1pk = ${x.value(shard.rekey.pk ?? readyIndexPk(group))}`);
    if (shard.rekey) {
      if (shard.rekey.pk === undefined) removes.push('rk');
      else sets.push(`rk = ${x.value(shard.rekey.pk)}`);
    }
    // Readiness may only be dropped or delayed if no notice raised the head and no commit freed a slot meanwhile.
    conditions.push(
      shard.expectKnown === undefined ? 'attribute_not_exists(kn)' : `kn = ${x.value(shard.expectKnown)}`,
      shard.expectLeases === undefined
        ? `size(${fl()}) = ${x.value(shard.expectInFlight)}`
        : `${fl()} = ${x.value(Object.fromEntries([...shard.expectLeases].filter(([, lease]) => !lease.range).map(([seq, lease]) => [String(seq), storedLease(lease)])))}`,
    );
    // Range claims count as leases in flight (docs/design.md, Range claims): the ranges as read too.
    if (shard.expectLeases !== undefined) conditions.push(rangesAsRead(x, shard.expectLeases));
  }
  if (change.shard) {
    // An idle shard's cursor expires 15 days after its last claim or notice (docs/design.md, Idle shards expire).
    const t = x.name('ttl');
    sets.push(`${t} = ${x.value(shardCursorTtl(change.shard.now))}`);
    conditions.push(`(attribute_not_exists(${t}) OR ${t} > ${x.value(Math.floor(change.shard.now / 1000))})`);
  }
  return {
    UpdateExpression: updateExpression(sets, removes, commits.length > 0 ? ` ADD cm ${x.value(commits.length)}` : ''),
    ConditionExpression: conditions.join(' AND '),
    ...(Object.keys(x.names).length ? { ExpressionAttributeNames: x.names } : {}),
    ExpressionAttributeValues: x.values,
  };
}

/** A range claim (docs/design.md, Range claims): one write that cannot lose to another grant. */
export interface GrantChange {
  /** The range's id (random, base64url): `fr.<id>`, `fq.<id>`. */
  id: string;
  n: number;
  /** The members' lease expiry (ms). */
  expiresAt: number;
  /** `nx` may be at most this: the known head as read − n, so the range is announced messages and the shard stays ready. */
  nextAtMost: number;
  /** Leases in `fl` as read (a grant needs `size(fl)` no larger: commits only shrink it). */
  plainLeases: number;
  /** Ranges besides this one the cursor may hold: each is at most RANGE_MAX_MESSAGES, all of them within MAX_IN_FLIGHT_PER_STREAM. */
  rangesAtMost: number;
  /** As read: the seek epoch, the visibility count and the ready-index key (ready now). */
  seekEpoch: number | undefined;
  visibilityVersion: number | undefined;
  readyKey: string;
  /** A segment start at or below every `nx` the grant can meet (the segment holding `nx` as read): the read position `ns`. */
  segmentStart: number;
  now: number;
}

/**
 * The grant: `fr.<id>` takes the cursor's `nx` as it is when DynamoDB applies the write, `nx` moves
 * `n` on (every action reads the item as it was before the update), so concurrent grants on one
 * cursor serialize on the item and none fails another: the range is `[fr.<id>, fr.<id> + n)`.
 * Conditional only on what grants do not change: the id unused (a repeated grant whose answer was
 * lost finds itself), `nx` far enough below the known head, no seek, release or index move since
 * the read, and the lease bound.
 */
export function grantUpdate(change: GrantChange): UpdateParts {
  const x = new Expr();
  const r = x.name(change.id);
  const t = x.name('ttl');
  return {
    // `nl`: `ns` may lag `nx` now; the next ordinary claim reads from the segment holding `nx`.
    UpdateExpression: `SET ${x.fr}.${r} = nx, ${x.fq}.${r} = ${x.value({ n: change.n, e: change.expiresAt })}, ns = ${x.value(change.segmentStart)}, nl = ${x.value(1)}, ${t} = ${x.value(shardCursorTtl(change.now))} ADD nx ${x.value(change.n)}`,
    ConditionExpression: [
      `attribute_not_exists(${x.fr}.${r})`,
      `nx <= ${x.value(change.nextAtMost)}`,
      change.seekEpoch === undefined ? 'attribute_not_exists(se)' : `se = ${x.value(change.seekEpoch)}`,
      change.visibilityVersion === undefined ? 'attribute_not_exists(vv)' : `vv = ${x.value(change.visibilityVersion)}`,
      `g1sk = ${x.value(change.readyKey)}`,
      `size(${x.fl}) <= ${x.value(change.plainLeases)}`,
      `size(${x.fq}) <= ${x.value(change.rangesAtMost)}`,
      `(attribute_not_exists(${t}) OR ${t} > ${x.value(Math.floor(change.now / 1000))})`,
    ].join(' AND '),
    ExpressionAttributeNames: x.names,
    ExpressionAttributeValues: x.values,
  };
}

/**
 * A spill on its own (docs/design.md, Range claims): completions written to history items leave
 * `dn` and the mark moves, conditional on the mark and the seek epoch as read — not on `nx`, which
 * grants move: a spill made with a claim would lose to every grant.
 */
export function spillUpdate(spilled: { expectMark: number | undefined; mark: number; remove: readonly string[] }, seekEpoch: number | undefined, now: number): UpdateParts {
  const x = new Expr();
  const removes = spilled.remove.map((key) => `${x.dn}.${x.name(key)}`);
  const t = x.name('ttl');
  return {
    UpdateExpression: updateExpression([`hw = ${x.value(spilled.mark)}`], removes),
    ConditionExpression: [
      spilled.expectMark === undefined ? 'attribute_not_exists(hw)' : `hw = ${x.value(spilled.expectMark)}`,
      seekEpoch === undefined ? 'attribute_not_exists(se)' : `se = ${x.value(seekEpoch)}`,
      `(attribute_not_exists(${t}) OR ${t} > ${x.value(Math.floor(now / 1000))})`,
    ].join(' AND '),
    ExpressionAttributeNames: x.names,
    ExpressionAttributeValues: x.values,
  };
}

/** The write that gives a cursor without them the empty range maps a grant sets entries of (once per cursor). */
export function rangeMapsUpdate(now: number): UpdateParts {
  return {
    UpdateExpression: 'SET #R = if_not_exists(#R, :none), #Q = if_not_exists(#Q, :none)',
    ConditionExpression: `attribute_exists(pk) AND ${LIVE_CURSOR}`,
    ExpressionAttributeNames: { '#R': 'fr', '#Q': 'fq', '#t': 'ttl' },
    ExpressionAttributeValues: { ':none': {}, ...liveValues(now) },
  };
}

/**
 * A range written out as ordinary leases (range-normaliser.ts): before anything but a commit of the
 * whole range touches a member. `leases`: the members that get one (a member without a record
 * gets none: the plan would have passed over it); conditional on the range being there as read.
 */
export function normaliseUpdate(range: RangeOfLease, expiresAt: number, leases: Lease[], now: number): UpdateParts {
  const x = new Expr();
  const r = x.name(range.id);
  const sets = leases.map((lease) => `${x.fl}.${x.name(String(lease.seq))} = ${x.value(storedLease(lease))}`);
  const t = x.name('ttl');
  return {
    UpdateExpression: `${sets.length > 0 ? `SET ${sets.join(', ')} ` : ''}REMOVE ${x.fr}.${r}, ${x.fq}.${r}`,
    ConditionExpression: `${x.fr}.${r} = ${x.value(range.start)} AND ${x.fq}.${r} = ${x.value({ n: range.n, e: expiresAt })} AND (attribute_not_exists(${t}) OR ${t} > ${x.value(Math.floor(now / 1000))})`,
    ExpressionAttributeNames: x.names,
    ExpressionAttributeValues: x.values,
  };
}

/**
 * Whether a cursor's image shows the claim `change` as written: every lease it grants is there with
 * its token. Lease tokens carry a random part, and nobody holds them before the claim is answered,
 * so only this claim can have written them: the image is the one a retry of a claim that landed
 * (its answer lost, docs/design.md, Append, "A put that landed, retried") meets, and the claim took
 * effect. A claim that grants nothing is not told apart (false): planned again from the image, it
 * finds nothing left to do, and delays no message.
 */
export function claimLanded(old: Record<string, unknown>, change: ClaimChange): boolean {
  const leases = (old.fl ?? {}) as Record<string, { k?: unknown } | undefined>;
  return change.grant.length > 0 && change.grant.every(({ lease }) => leases[String(lease.seq)]?.k === lease.token);
}

/**
 * The most a cursor item may hold after a write (bytes). Far below DynamoDB's
 * 400 KB item limit, and the claim is cut to keep it: a cursor holds at most
 * MAX_IN_FLIGHT_PER_STREAM leases and, between spills, at most about SPILL_HOLES_AT + 100
 * completions of ~10 bytes each (history.ts), so only long topic names
 * (time-order groups store them per lease) come near it.
 */
export const CURSOR_ITEM_BUDGET_BYTES = 64 * 1024;

/** The cursor as a claim of `change` would leave it (for the item budget). */
export function cursorAfterClaim(cursor: CursorState, change: ClaimChange): CursorState {
  const leases = new Map(cursor.leases);
  const done = new Map(cursor.done);
  for (const { done: entry } of change.close) {
    leases.delete(entry.seq);
    done.set(entry.seq, entry);
  }
  for (const { seq, token } of change.commit?.entries ?? []) {
    leases.delete(seq);
    done.set(seq, committedDone(seq, token, change.commit?.now ?? 0));
  }
  for (const { lease } of change.grant) leases.set(lease.seq, lease);
  const storedKeys = cursor.storedKeys ? new Map(cursor.storedKeys) : undefined;
  for (const key of change.forgetDone) {
    // A key of `dn` (cursor-item.ts `completionKeys`): a run's removes every member still its.
    storedKeys?.delete(key);
    const run = runOfKey(key);
    if (run === undefined) {
      done.delete(Number(key));
      continue;
    }
    for (const [seq, entry] of done) if (memberOf(entry, run)) done.delete(seq);
  }
  const historyMark = change.history ? change.history.mark : cursor.historyMark;
  const readyKey = change.shard?.index ? change.shard.index.to : cursor.readyKey;
  const rekey = change.shard?.rekey;
  return {
    ...cursor,
    next: change.next,
    segmentStart: change.segmentStart,
    leases,
    done,
    ...(storedKeys ? { storedKeys } : {}),
    ...(change.shard ? { known: change.shard.known } : {}),
    ...(change.shard?.epochStart !== undefined ? { epochStart: change.shard.epochStart } : {}),
    readyKey,
    ...(rekey ? { readyPk: rekey.pk } : {}),
    ...(historyMark !== undefined ? { historyMark } : {}),
  };
}

/**
 * Whether a claim may be written as it is: both expressions within
 * {@link EXPRESSION_BUDGET_BYTES} and the item after it within
 * {@link CURSOR_ITEM_BUDGET_BYTES}. The receiver plans a smaller claim until it does.
 */
export const claimFits = (cursor: CursorState, change: ClaimChange): boolean =>
  fitsExpressionBudget(claimUpdate(cursor.group, change)) && itemBytes(toItem(cursorAfterClaim(cursor, change))) <= CURSOR_ITEM_BUDGET_BYTES;

/** A commit of leases, protected-mode pending marks, or both (see {@link completionUpdate}). */
export interface CompletionChange {
  complete: Array<{ seq: number; token: string }>;
  /**
   * Whole ranges committed (docs/design.md, Range claims): each leaves `fr`/`fq` and all its
   * members enter `dn` as `committed`, conditional on the range being there as granted.
   */
  ranges?: Array<{ range: RangeOfLease; token: string }>;
  markPending?: Array<{ seq: number; token: string }>;
  blocker?: { seq: number; token: string };
  now: number;
  /** FIFO shards: what to do with the ready-index entry (default: ready now, unconditionally). */
  readiness?: CommitReadiness;
}

/**
 * The update that completes and/or marks leases pending (protected mode):
 * completed leases leave `fl` for `dn`; pending ones get `c = 1`. Each named
 * lease must still carry its token; `blocker` (the oldest lease not yet
 * committed) must still be there, so that its own commit will cascade. On a
 * FIFO shard it also makes the commit's ready-index write.
 */
export function completionUpdate(group: string, stream: string, change: CompletionChange): UpdateParts {
  const x = new Expr();
  const fl = () => x.fl;
  const dn = () => x.dn;
  const removes: string[] = [];
  const sets: string[] = [];
  const conditions: string[] = [];
  for (const { seq, token } of change.complete) {
    const s = x.name(String(seq));
    removes.push(`${fl()}.${s}`);
    sets.push(`${dn()}.${s} = ${x.value(storedDone(committedDone(seq, token, change.now)))}`);
    conditions.push(`${fl()}.${s}.k = ${x.value(token)}`);
  }
  for (const { seq, token } of change.markPending ?? []) {
    const s = x.name(String(seq));
    sets.push(`${fl()}.${s}.c = ${x.value(1)}`);
    conditions.push(`${fl()}.${s}.k = ${x.value(token)}`);
  }
  if (change.blocker) {
    conditions.push(`${fl()}.${x.name(String(change.blocker.seq))}.k = ${x.value(change.blocker.token)}`);
  }
  let rangeMembers = 0;
  for (const { range, token } of change.ranges ?? []) {
    const r = x.name(range.id);
    removes.push(`${x.fr}.${r}`, `${x.fq}.${r}`);
    conditions.push(`${x.fr}.${r} = ${x.value(range.start)}`, `${x.fq}.${r}.n = ${x.value(range.n)}`);
    // One entry for the range's completions (docs/design.md, Range claims, "One completion a range").
    const first = committedDone(range.start, token, change.now);
    sets.push(`${dn()}.${x.name(runKey(range.start, first.epoch))} = ${x.value(storedRun(first, range.n))}`);
    rangeMembers += range.n;
  }
  const rangesCompleted = change.ranges?.length ?? 0;
  if (isShardStream(stream)) {
    // A cursor past its `ttl` is absent: its leases cannot be committed (409), nothing is written.
    const t = x.name('ttl');
    conditions.push(`(attribute_not_exists(${t}) OR ${t} > ${x.value(Math.floor(change.now / 1000))})`);
    // Only a change of readiness touches the index; each choice but an unguarded `ready` is
    // conditional on the cursor state that makes it right (docs/design.md, Ready index).
    const { readiness, guarded } = change.readiness ?? READY_NOW;
    const completing = () => x.value(change.complete.length);
    if (readiness === 'ready') {
      // Known messages after nx: ready now (an unchanged key is no index write).
      sets.push(`g1pk = ${readyPkOf(x.value(readyIndexPk(group)))}`, `g1sk = ${x.value(readyNowKey(stream))}`);
      if (guarded) conditions.push('(attribute_not_exists(kn) OR kn >= nx)');
    } else if (readiness === 'drop') {
      // Nothing after nx and no lease left: idle until a notice raises kn.
      removes.push('g1pk', 'g1sk');
      // Ranges are leases in flight too (docs/design.md, Range claims).
      conditions.push(`kn < nx AND size(${fl()}) = ${completing()} AND (attribute_not_exists(${x.fq}) OR size(${x.fq}) = ${x.value(rangesCompleted)})`);
    } else {
      // Nothing after nx, leases left: the entry already waits for the earliest of them.
      conditions.push(`kn < nx AND (size(${fl()}) > ${completing()} OR size(${x.fq}) > ${x.value(rangesCompleted)})`);
      const { head } = change.readiness ?? {};
      if (head !== undefined) conditions.push(`attribute_not_exists(${fl()}.${x.name(String(head))}.c)`);
    }
  }
  const completed = change.complete.length + rangeMembers;
  const adds = completed > 0 ? ` ADD cm ${x.value(completed)}` : '';
  return {
    UpdateExpression: updateExpression(sets, removes, adds),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: x.names,
    ExpressionAttributeValues: x.values,
  };
}

/** Every ready-index write a completion may carry: a chunk that fits with each fits whatever the commit decides. */
const COMPLETION_VARIANTS: Array<CommitReadiness | undefined> = [
  undefined,
  { readiness: 'ready', guarded: true },
  { readiness: 'drop', guarded: true },
  { readiness: 'keep', guarded: true, head: Number.MAX_SAFE_INTEGER },
];

/**
 * Splits the leases one commit completes on one stream into chunks whose
 * completion update fits {@link EXPRESSION_BUDGET_BYTES} (with any ready-index
 * write), in order; each chunk is one write.
 */
export function completionChunks<T extends { seq: number; token: string }>(group: string, stream: string, entries: T[], now: number): T[][] {
  const fits = (complete: T[]) =>
    COMPLETION_VARIANTS.every((readiness) =>
      fitsExpressionBudget(completionUpdate(group, stream, { complete, now, ...(readiness ? { readiness } : {}) })),
    );
  if (fits(entries)) return [entries];
  const chunks: T[][] = [];
  let chunk: T[] = [];
  for (const entry of entries) {
    if (chunk.length > 0 && !fits([...chunk, entry])) {
      chunks.push(chunk);
      chunk = [];
    }
    chunk.push(entry);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * How a visibility change treats a FIFO shard's ready-index entry, which must
 * be no later than the lease's new expiry: `keep` an entry already early
 * enough (a longer lease: one early look, then the claim moves it), `lower` a
 * later one to the new expiry, or make the shard ready `now` (always safe).
 * Not a shard: `plain`.
 */
export type VisibilityVariant = 'plain' | 'keep' | 'lower' | 'now';

/** The variants to try in order until one's condition holds (the last one always does, if the lease does). */
export const visibilityVariants = (stream: string, expiresAt: number, now: number): VisibilityVariant[] =>
  !isShardStream(stream) ? ['plain'] : expiresAt > now ? ['keep', 'lower', 'keep', 'now'] : ['now'];

/** Moves lease `seq`'s expiry, conditional on its token and on it not being a pending commit. */
export function visibilityUpdate(
  group: string,
  stream: string,
  lease: { seq: number; token: string },
  expiresAt: number,
  variant: VisibilityVariant,
  released = false,
  now = 0,
  untried = false,
): UpdateParts {
  // `r` remembers a release (a failed attempt the holder reported) for the dead letter's reason.
  // It is 1 or absent, never 0: claims compare whole lease maps (`storedLease`), which must match.
  const values: Record<string, unknown> = { ':e': expiresAt, ':k': lease.token, ...(released ? { ':r': 1 } : {}) };
  let update = released ? 'SET fl.#s.e = :e, fl.#s.r = :r' : 'SET fl.#s.e = :e';
  let condition = 'fl.#s.k = :k AND attribute_not_exists(fl.#s.c)';
  if (variant === 'keep') {
    condition += ' AND g1sk <= :at';
    values[':at'] = readyAtKey(expiresAt);
  } else if (variant === 'lower') {
    update += `, g1pk = ${readyPkOf(':rk')}, g1sk = :at`;
    condition += ' AND (attribute_not_exists(g1sk) OR g1sk > :at)';
    values[':at'] = readyAtKey(expiresAt);
    values[':rk'] = readyIndexPk(group);
  } else if (variant === 'now') {
    update += `, g1pk = ${readyPkOf(':rk')}, g1sk = :at`;
    values[':at'] = readyNowKey(stream);
    values[':rk'] = readyIndexPk(group);
  }
  // Given back unattempted (its holder never handled it: it waited behind a failed message of its
  // FIFO shard): the delivery it was leased for is not counted, so the next claim delivers it with
  // the same deliveryCount and it never reaches maxDeliveries without an attempt.
  // Once only: a repeated give-back (a retried request) finds the count lowered already.
  if (untried) {
    update += ', fl.#s.d = fl.#s.d - :untried';
    condition += ' AND fl.#s.d = :leased';
    values[':untried'] = 1;
    values[':leased'] = deliveriesOfToken(lease.token);
  }
  if (!released) update += ' REMOVE fl.#s.r';
  const shard = isShardStream(stream);
  if (shard) {
    condition += ` AND ${LIVE_CURSOR}`;
    Object.assign(values, liveValues(now));
    // Counted: a claim that passes commits is conditional on the count, not on every lease (claimUpdate).
    update += ' ADD vv :one';
    values[':one'] = 1;
  }
  return {
    UpdateExpression: update,
    ConditionExpression: condition,
    ExpressionAttributeNames: { '#s': String(lease.seq), ...(shard ? { '#t': 'ttl' } : {}) },
    ExpressionAttributeValues: values,
  };
}

/** Closes a lease as dead-lettered (in the transaction of the dead-letter append); a FIFO shard becomes ready now. */
export function deadLetterUpdate(group: string, stream: string, done: DoneEntry, token: string, expiresAt?: number): UpdateParts {
  const shard = isShardStream(stream);
  return {
    UpdateExpression: `SET dn.#s = :done${shard ? `, g1pk = ${readyPkOf(':rk')}, g1sk = :rs` : ''} REMOVE fl.#s ADD dl :one`,
    // Not a lease whose (protected) commit went pending meanwhile; a shard cursor not expired.
    ConditionExpression: `fl.#s.k = :k AND attribute_not_exists(fl.#s.c)${expiresAt === undefined ? '' : ' AND fl.#s.e = :e'}${shard ? ` AND ${LIVE_CURSOR}` : ''}`,
    ExpressionAttributeNames: { '#s': String(done.seq), ...(shard ? { '#t': 'ttl' } : {}) },
    ExpressionAttributeValues: {
      ':done': storedDone(done),
      ':k': token,
      ...(expiresAt === undefined ? {} : { ':e': expiresAt }),
      ':one': 1,
      ...(shard ? { ':rk': readyIndexPk(group), ':rs': readyNowKey(stream), ...liveValues(done.at) } : {}),
    },
  };
}

/**
 * A notice raised a FIFO shard's known head to `to`: ready now, unless the cursor knows as much
 * already (or is missing). The raise puts the entry under `readyPk`, the key of the notice stream
 * that announced it (undefined: the group's home key, and no `rk`), whatever key the cursor had.
 */
export function raiseKnownUpdate(group: string, stream: string, to: number, now: number, epochStart?: number, readyPk?: string): UpdateParts {
  return {
    // The raise keeps the cursor alive for as long as the messages it announces (and notes an epoch's start).
    UpdateExpression: `SET kn = :to, g1pk = :rk, g1sk = :rs, #t = :t${epochStart === undefined ? '' : ', ke = :e'}${readyPk === undefined ? ' REMOVE rk' : ', rk = :rk'}`,
    ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(kn) OR kn < :to) AND ${LIVE_CURSOR}`,
    ExpressionAttributeNames: { '#t': 'ttl' },
    ExpressionAttributeValues: {
      ':to': to,
      ':rk': readyPk ?? readyIndexPk(group),
      ':rs': readyNowKey(stream),
      ':t': shardCursorTtl(now),
      ...liveValues(now),
      ...(epochStart === undefined ? {} : { ':e': epochStart }),
    },
  };
}

/**
 * Notes a later epoch's start on a live FIFO shard cursor that already knows as much as the
 * notice announcing it (`raiseKnownUpdate` failed on `kn`): notices of one shard are read from any
 * notice stream, so the epoch's first notice may come after a later one of the same epoch.
 */
export function raiseEpochUpdate(epochStart: number, now: number): UpdateParts {
  return {
    UpdateExpression: 'SET ke = :e',
    ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(ke) OR ke < :e) AND ${LIVE_CURSOR}`,
    ExpressionAttributeNames: { '#t': 'ttl' },
    ExpressionAttributeValues: { ':e': epochStart, ...liveValues(now) },
  };
}

/** Moves a lease-less cursor (notice streams) from `expectNext` on. */
export function advanceUpdate(expectNext: number, next: number, segmentStart: number): UpdateParts {
  return {
    UpdateExpression: 'SET nx = :nx, ns = :ns',
    ConditionExpression: 'nx = :old',
    ExpressionAttributeValues: { ':nx': next, ':ns': segmentStart, ':old': expectNext },
  };
}

/** The attributes of a cursor a seek reads and conditions its move on, as stored. */
export interface SeekRead {
  nx: unknown;
  fl: unknown;
  /** Range claims (absent: none): ended by the seek like leases. */
  fq?: unknown;
  /** FIFO shard cursors: the known head (absent: never raised). */
  kn?: unknown;
}

/**
 * Seek (docs/design.md, Seek): moves a cursor to `next` (read position `segmentStart`) and ends
 * every lease, pending commits included, conditional on `nx`, the whole lease map (`fl = :fl`:
 * DynamoDB compares maps as values) and, on a FIFO shard, `kn` — all as read — so a claim, commit,
 * visibility change or notice that raced it either happened before (and is read again) or fails.
 * A shard's ready-index entry is set from what the move leaves: ready now when notices announced
 * messages at or after `next` (`kn >= next`), else off the index (later notices put it back).
 * A shard cursor past its `ttl` at `now` (ms) is absent and not moved (docs/design.md, Idle shards
 * expire): the condition fails and the shard's next notice replaces it at the seek's position.
 * The move bumps the cursor's seek epoch `se`: leases granted after it carry the new epoch in their
 * token, so no old handle is ever taken for one of them (deliveries restart at 1).
 */
export function seekMoveUpdate(group: string, stream: string, read: SeekRead, next: number, segmentStart: number, now: number): UpdateParts {
  const values: Record<string, unknown> = { ':to': next, ':ns': segmentStart, ':none': {}, ':nx': read.nx, ':fl': read.fl ?? {}, ':one': 1 };
  const sets = ['nx = :to', 'ns = :ns', 'fl = :none'];
  const removes: string[] = [];
  const conditions = ['nx = :nx', 'fl = :fl'];
  const shard = isShardStream(stream);
  // Range claims (FIFO shards) end with the leases (docs/design.md, Range claims): their maps are
  // emptied, as read (not removed: a grant writes into them, and assumes them there once they were).
  if (!shard) {
    // Partition cursors hold no ranges.
  } else if (read.fq !== undefined && Object.keys(read.fq as object).length > 0) {
    sets.push('fr = :none', 'fq = :none');
    conditions.push('fq = :fq');
    values[':fq'] = read.fq;
  } else {
    conditions.push('(attribute_not_exists(fq) OR size(fq) = :zero)');
    values[':zero'] = 0;
  }
  if (shard) {
    if (read.kn === undefined) conditions.push('attribute_not_exists(kn)');
    else {
      conditions.push('kn = :kn');
      values[':kn'] = read.kn;
    }
    if (Number(read.kn ?? 0) >= next) {
      sets.push(`g1pk = ${readyPkOf(':rk')}`, 'g1sk = :rs');
      values[':rk'] = readyIndexPk(group);
      values[':rs'] = readyNowKey(stream);
    } else removes.push('g1pk', 'g1sk');
    conditions.push(LIVE_CURSOR);
    Object.assign(values, liveValues(now));
  }
  return {
    UpdateExpression: `${updateExpression(sets, removes)} ADD se :one`,
    ConditionExpression: conditions.join(' AND '),
    ...(shard ? { ExpressionAttributeNames: { '#t': 'ttl' } } : {}),
    ExpressionAttributeValues: values,
  };
}

/**
 * Seek of a FIFO namespace, on each of its notice cursors: counts the seek (`sv`, which shard
 * cursor creations are conditional on), records where shard cursors created from now on start
 * (`sf`) and, when `to` is given, moves the cursor there (earliest: back to the first stored
 * notice, so the group hears again of every shard with retained messages; latest: past the last).
 */
export function noticeSeekUpdate(to: { next: number; segmentStart: number } | undefined, floor: number): UpdateParts {
  return {
    UpdateExpression: `SET ${to ? 'nx = :nx, ns = :ns, ' : ''}sf = :sf ADD sv :one`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':sf': floor, ':one': 1, ...(to ? { ':nx': to.next, ':ns': to.segmentStart } : {}) },
  };
}

/** The condition a new shard cursor is created under: its notice cursor saw no seek since `version` was read. */
export function unsoughtSinceCondition(version: number | undefined): { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> } {
  return version === undefined
    ? { ConditionExpression: 'attribute_not_exists(sv)' }
    : { ConditionExpression: 'sv = :sv', ExpressionAttributeValues: { ':sv': version } };
}
