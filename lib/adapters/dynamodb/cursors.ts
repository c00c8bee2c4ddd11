/**
 * Cursor items: one per (consumer group, stream), pk "C#<group>", sk "<stream>".
 *
 *   nx  next sequence number never delivered to the group
 *   ns  first sequence number of the segment holding nx
 *   fl  leases in flight: { "<seq>": { e: expiresAt, k: token, d: deliveries, g: segment, t?: topic } }
 *   dn  recently completed: { "<seq>": { k: token, a: at, o: outcome, d: deliveries } }
 *   cm, dl  counters of committed and dead-lettered messages
 *
 * Every change is conditional: a claim on the `nx` it read and on the token of
 * every lease it renews; a commit or visibility change on its own lease token.
 * Claims and commits of different messages therefore never conflict.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ThrottledError } from '../../domain/errors.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  combinedHint,
  deliveriesOfToken,
  readinessAfterCompletion,
  type CursorState,
  type DoneEntry,
  type DoneOutcome,
  type Lease,
  type Readiness,
} from '../../domain/cursor.js';
import { isShardStream } from '../../domain/streams.js';
import { GSI1 } from './table.js';
import { call, conditional, queryAll } from './call.js';
import { isConditionalFailure } from './errors.js';
import type { TransactItem } from './stream-log.js';
import {
  cursorPk,
  groupOfCursorPk,
  pendingOutputsKey,
  readyAtKey,
  readyAtOfKey,
  readyIndexPk,
  readyNowKey,
  readyNowKeyAt,
} from './keys.js';

interface StoredLease {
  e: number;
  k: string;
  d: number;
  g: number;
  t?: string;
  c?: 1;
}
interface StoredDone {
  k: string;
  a: number;
  o: DoneOutcome;
  d: number;
}


/** The item's old image from a failed condition (the document client leaves it marshalled). */
const oldImage = (error: unknown): Record<string, unknown> | undefined => {
  const item = (error as { Item?: Record<string, AttributeValue> }).Item;
  return item ? unmarshall(item) : undefined;
};

const toState = (item: Record<string, unknown>): CursorState => {
  const leases = new Map<number, Lease>();
  for (const [seq, l] of Object.entries((item.fl as Record<string, StoredLease> | undefined) ?? {})) {
    leases.set(Number(seq), {
      seq: Number(seq),
      expiresAt: l.e,
      token: l.k,
      deliveries: l.d,
      segment: l.g,
      topic: l.t,
      pending: l.c === 1,
    });
  }
  const done = new Map<number, DoneEntry>();
  for (const [seq, d] of Object.entries((item.dn as Record<string, StoredDone> | undefined) ?? {})) {
    done.set(Number(seq), { seq: Number(seq), token: d.k, at: d.a, outcome: d.o, deliveries: d.d });
  }
  return {
    group: groupOfCursorPk(String(item.pk)),
    stream: String(item.sk),
    next: Number(item.nx),
    segmentStart: Number(item.ns),
    leases,
    done,
    committed: Number(item.cm ?? 0),
    deadLettered: Number(item.dl ?? 0),
    known: item.kn === undefined ? undefined : Number(item.kn),
    readyAt: item.g1sk === undefined ? undefined : readyAtOfKey(String(item.g1sk)),
    readySk: item.g1sk === undefined ? undefined : String(item.g1sk),
  };
};

/**
 * Ready-index keys of FIFO shard cursors (gsi1): `R#<group>` / sort key.
 * A shard waiting for a lease to expire is indexed at that time (zero-padded
 * ms); a shard with work now at a key of its own, `#<hash of the stream>`,
 * that sorts before every time and never changes while the shard stays ready,
 * so claims and commits on a busy shard leave its index entry alone (an index
 * key change costs 2 WRU more). The hash spreads ready shards so that
 * {@link CursorStore.ready} can start reading at a random point.
 */
/** The index key for a ready time: the shard's own "ready now" key for any time not after `now`. */
export const readyKey = (stream: string, at: number | undefined, now: number): string | undefined =>
  at === undefined ? undefined : at <= now ? readyNowKey(stream) : readyAtKey(at);

const storedLease = (lease: Lease): StoredLease => {
  const stored: StoredLease = { e: lease.expiresAt, k: lease.token, d: lease.deliveries, g: lease.segment };
  if (lease.topic !== undefined) stored.t = lease.topic;
  if (lease.pending) stored.c = 1;
  return stored;
};
const storedDone = (done: DoneEntry): StoredDone => ({ k: done.token, a: done.at, o: done.outcome, d: done.deliveries });

/** Builds update expressions with numbered placeholders. */
class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private n = 0;
  private readonly byName = new Map<string, string>();
  /** A placeholder for an attribute name; created on first use so that no name goes unused. */
  name(name: string): string {
    let key = this.byName.get(name);
    if (key === undefined) {
      key = `#n${this.n++}`;
      this.byName.set(name, key);
      this.names[key] = name;
    }
    return key;
  }
  value(value: unknown): string {
    const key = `:v${this.n++}`;
    this.values[key] = value;
    return key;
  }
}

export interface ClaimChange {
  /** The `nx` the plan was made from. */
  expectNext: number;
  next: number;
  segmentStart: number;
  /** New or renewed leases; renewals name the token they replace. */
  grant: Array<{ lease: Lease; replaces: string | undefined }>;
  /** Leases to close without delivery (message expired), with the token they must still carry. */
  close: Array<{ done: DoneEntry; replaces: string }>;
  forgetDone: number[];
  /**
   * FIFO shard cursors only: the new known head, guarded by what the plan read;
   * `index` when the ready-index key changes (from the key read to the new one,
   * undefined = off the index). Without it `g1pk`/`g1sk` are not written at all.
   */
  shard?: {
    expectKnown: number | undefined;
    expectInFlight: number;
    known: number;
    index?: { from: string | undefined; to: string | undefined };
  };
}

/** A commit's ready-index write (see {@link Readiness}); `guarded` adds the conditions that prove it. */
export interface CommitReadiness {
  readiness: Readiness;
  guarded: boolean;
  /**
   * Protected mode, `keep`: the lowest lease left after the commit, which must not be a pending
   * commit (one marked meanwhile, its blocker now completed, is work to cascade: ready now).
   */
  head?: number;
}

export type CommitOutcome = 'committed' | 'expired';

export class CursorStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(group: string, stream: string): Promise<CursorState | undefined> {
    const { Item } = await call(() =>
      this.doc.send(
        new GetCommand({ TableName: this.table, Key: { pk: cursorPk(group), sk: stream }, ConsistentRead: true }),
      ),
    );
    return Item ? toState(Item) : undefined;
  }

  /**
   * Cursors of `group` on the named streams (missing ones are left out).
   * `consistent: false` reads at half the price; fit for planning only,
   * because every write planned from a cursor is conditional on what it read.
   */
  async getMany(group: string, streams: string[], options: { consistent?: boolean } = {}): Promise<Map<string, CursorState>> {
    const consistent = options.consistent ?? true;
    const out = new Map<string, CursorState>();
    for (let i = 0; i < streams.length; i += 100) {
      let keys: Record<string, unknown>[] = streams.slice(i, i + 100).map((sk) => ({ pk: cursorPk(group), sk }));
      for (let round = 0; keys.length > 0; round++) {
        const result = await call(() =>
          this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: consistent } } })),
        );
        for (const item of result.Responses?.[this.table] ?? []) out.set(String(item.sk), toState(item));
        keys = (result.UnprocessedKeys?.[this.table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
        if (keys.length > 0 && round >= 8) throw new ThrottledError('The message store is busy; retry the request.');
        if (keys.length > 0) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** round));
      }
    }
    return out;
  }

  /** Every cursor of a group (admin statistics; O(streams the group has touched)). */
  async list(group: string): Promise<CursorState[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': cursorPk(group) },
      ConsistentRead: true,
    });
    return items.map(toState);
  }

  /** Creates the cursor at `next` unless it already exists (subscribing twice changes nothing). */
  async createIfAbsent(group: string, stream: string, next: number, now: number): Promise<void> {
    try {
      await call(() =>
        this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: { pk: cursorPk(group), sk: stream, nx: next, ns: next, fl: {}, dn: {}, cm: 0, dl: 0, ca: now },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
    }
  }

  /** Applies a claim plan; false when another receiver changed the cursor first. */
  async claim(group: string, stream: string, change: ClaimChange): Promise<boolean> {
    const x = new Expr();
    const sets = [`nx = ${x.value(change.next)}`, `ns = ${x.value(change.segmentStart)}`];
    const removes: string[] = [];
    const conditions = [`nx = ${x.value(change.expectNext)}`];
    const fl = () => x.name('fl');
    const dn = () => x.name('dn');
    for (const { lease, replaces } of change.grant) {
      const seq = x.name(String(lease.seq));
      sets.push(`${fl()}.${seq} = ${x.value(storedLease(lease))}`);
      // A renewal replaces the lease the plan read — still carrying its token and not committed
      // meanwhile (protected mode marks a committed lease pending, keeping its token).
      if (replaces !== undefined) conditions.push(`${fl()}.${seq}.k = ${x.value(replaces)}`, `attribute_not_exists(${fl()}.${seq}.c)`);
    }
    for (const { done, replaces } of change.close) {
      const seq = x.name(String(done.seq));
      removes.push(`${fl()}.${seq}`);
      sets.push(`${dn()}.${seq} = ${x.value(storedDone(done))}`);
      conditions.push(`${fl()}.${seq}.k = ${x.value(replaces)}`, `attribute_not_exists(${fl()}.${seq}.c)`);
    }
    for (const seq of change.forgetDone) removes.push(`${dn()}.${x.name(String(seq))}`);
    if (change.shard) {
      const { shard } = change;
      sets.push(`kn = ${x.value(shard.known)}`);
      if (shard.index) {
        const { from, to } = shard.index;
        if (to === undefined) removes.push('g1pk', 'g1sk');
        else sets.push(`g1pk = ${x.value(readyIndexPk(group))}`, `g1sk = ${x.value(to)}`);
        // Nobody (a visibility change) moved the entry since it was read.
        conditions.push(from === undefined ? 'attribute_not_exists(g1sk)' : `g1sk = ${x.value(from)}`);
      }
      // Readiness may only be dropped or delayed if no notice raised the head and no commit freed a slot meanwhile.
      conditions.push(
        shard.expectKnown === undefined ? 'attribute_not_exists(kn)' : `kn = ${x.value(shard.expectKnown)}`,
        `size(${fl()}) = ${x.value(shard.expectInFlight)}`,
      );
    }
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: cursorPk(group), sk: stream },
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ...(Object.keys(x.names).length ? { ExpressionAttributeNames: x.names } : {}),
          ExpressionAttributeValues: x.values,
        }),
      ),
    );
  }

  /**
   * Commits leases of one stream in one write. When any token no longer
   * matches, each entry is retried alone and classified from the item's old
   * image: a repeat of a commit that took effect answers `committed`,
   * anything else `expired`.
   */
  async commit(
    group: string,
    stream: string,
    entries: Array<{ seq: number; token: string }>,
    now: number,
  ): Promise<CommitOutcome[]> {
    const shard = isShardStream(stream);
    if (entries.length > 1) {
      // FIFO: first as the leases' claim guessed, then as the cursor the failed attempt saw says.
      let readiness = shard ? firstGuess(entries.map((e) => e.token)) : undefined;
      for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
        const result = await this.commitAll(group, stream, entries, now, readiness);
        if (result === true) return entries.map(() => 'committed');
        // Only a readiness guess that did not hold is worth another try of the whole write.
        readiness = result && shard ? retryReadiness(result, entries, attempt + 1) : undefined;
        if (!readiness) break;
      }
    }
    const out: CommitOutcome[] = [];
    for (const entry of entries) out.push(await this.commitOne(group, stream, entry, now));
    return out;
  }

  /** The readiness write a commit should make, decided from the cursor as read (protected commits, commits with outputs). */
  static readinessFor(cursor: CursorState, completing: number, attempt = 0): CommitReadiness {
    if (attempt >= COMMIT_ATTEMPTS - 1) return { readiness: 'ready', guarded: false };
    return { readiness: readinessAfterCompletion(cursor.known, cursor.next, cursor.leases.size - completing), guarded: true };
  }
  /** The readiness write the claim guessed for these leases' commit. */
  static readinessGuess(tokens: string[]): CommitReadiness {
    return firstGuess(tokens);
  }

  /** A {@link completion} as a transaction item (commits with publish outputs, protected commits). */
  completionItem(group: string, stream: string, change: Parameters<CursorStore['completion']>[2]): TransactItem {
    return { Update: { TableName: this.table, Key: { pk: cursorPk(group), sk: stream }, ...this.completion(group, stream, change) } };
  }

  /** Saves the publish outputs of a pending (protected) commit, written with the pending mark. */
  pendingOutputsPut(group: string, stream: string, seq: number, outputs: unknown[], ttlSeconds: number): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: { ...pendingOutputsKey(group, stream, seq), p: JSON.stringify(outputs), ttl: ttlSeconds },
      },
    };
  }

  pendingOutputsDelete(group: string, stream: string, seq: number): TransactItem {
    return { Delete: { TableName: this.table, Key: pendingOutputsKey(group, stream, seq) } };
  }

  async pendingOutputs(group: string, stream: string, seqs: number[]): Promise<Map<number, unknown[]>> {
    const out = new Map<number, unknown[]>();
    for (const seq of seqs) {
      const { Item } = await call(() =>
        this.doc.send(
          new GetCommand({ TableName: this.table, Key: pendingOutputsKey(group, stream, seq), ConsistentRead: true }),
        ),
      );
      if (Item) out.set(seq, JSON.parse(String(Item.p)) as unknown[]);
    }
    return out;
  }

  /** How a commit of `entry` that failed its condition should be answered, from the cursor as it is now. */
  async classify(group: string, stream: string, entry: { seq: number; token: string }): Promise<CommitOutcome | 'pending'> {
    const cursor = await this.get(group, stream);
    const done = cursor?.done.get(entry.seq);
    if (done && done.token === entry.token && done.outcome === 'committed') return 'committed';
    const lease = cursor?.leases.get(entry.seq);
    if (lease && lease.token === entry.token && lease.pending) return 'pending';
    return 'expired';
  }

  /**
   * The update that completes and/or marks leases pending (protected mode):
   * completed leases leave `fl` for `dn`; pending ones get `c = 1`. Each named
   * lease must still carry its token; `blocker` (the oldest lease not yet
   * committed) must still be there, so that its own commit will cascade.
   */
  completion(
    group: string,
    stream: string,
    change: {
      complete: Array<{ seq: number; token: string }>;
      markPending?: Array<{ seq: number; token: string }>;
      blocker?: { seq: number; token: string };
      now: number;
      /** FIFO shards: what to do with the ready-index entry (default: ready now, unconditionally). */
      readiness?: CommitReadiness;
    },
  ) {
    const x = new Expr();
    const fl = () => x.name('fl');
    const dn = () => x.name('dn');
    const removes: string[] = [];
    const sets: string[] = [];
    const conditions: string[] = [];
    for (const { seq, token } of change.complete) {
      const s = x.name(String(seq));
      removes.push(`${fl()}.${s}`);
      sets.push(`${dn()}.${s} = ${x.value({ k: token, a: change.now, o: 'committed', d: deliveriesOfToken(token) })}`);
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
    if (isShardStream(stream)) {
      // Only a change of readiness touches the index; each choice but an unguarded `ready` is
      // conditional on the cursor state that makes it right (docs/design.md, Ready index).
      const { readiness, guarded } = change.readiness ?? { readiness: 'ready', guarded: false };
      const completing = () => x.value(change.complete.length);
      if (readiness === 'ready') {
        // Known messages after nx: ready now (an unchanged key is no index write).
        sets.push(`g1pk = ${x.value(readyIndexPk(group))}`, `g1sk = ${x.value(readyNowKey(stream))}`);
        if (guarded) conditions.push('(attribute_not_exists(kn) OR kn >= nx)');
      } else if (readiness === 'drop') {
        // Nothing after nx and no lease left: idle until a notice raises kn.
        removes.push('g1pk', 'g1sk');
        conditions.push(`kn < nx AND size(${fl()}) = ${completing()}`);
      } else {
        // Nothing after nx, leases left: the entry already waits for the earliest of them.
        conditions.push(`kn < nx AND size(${fl()}) > ${completing()}`);
        const { head } = change.readiness ?? {};
        if (head !== undefined) conditions.push(`attribute_not_exists(${fl()}.${x.name(String(head))}.c)`);
      }
    }
    const adds = change.complete.length > 0 ? ` ADD cm ${x.value(change.complete.length)}` : '';
    return {
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}${adds}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: x.names,
      ExpressionAttributeValues: x.values,
    };
  }

  /** True when committed; else the item's old image (undefined: no image, or duplicate entries). */
  private async commitAll(
    group: string,
    stream: string,
    entries: Array<{ seq: number; token: string }>,
    now: number,
    readiness: CommitReadiness | undefined,
  ): Promise<true | Record<string, unknown> | undefined> {
    const unique = [...new Map(entries.map((e) => [e.seq, e])).values()];
    if (unique.length !== entries.length) return undefined;
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            ...this.completion(group, stream, { complete: entries, now, ...(readiness ? { readiness } : {}) }),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return oldImage(error);
      throw error;
    }
  }

  private async commitOne(group: string, stream: string, entry: { seq: number; token: string }, now: number): Promise<CommitOutcome> {
    const shard = isShardStream(stream);
    let readiness = shard ? firstGuess([entry.token]) : undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        await call(() =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: cursorPk(group), sk: stream },
              ...this.completion(group, stream, { complete: [entry], now, ...(readiness ? { readiness } : {}) }),
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return 'committed';
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        const old = oldImage(error);
        const done = (old?.dn as Record<string, StoredDone> | undefined)?.[String(entry.seq)];
        if (done !== undefined && done.k === entry.token && done.o === 'committed') return 'committed';
        // The lease is still ours: only the readiness guess failed; decide again from what the cursor was.
        readiness = old && shard && attempt < COMMIT_ATTEMPTS ? retryReadiness(old, [entry], attempt) : undefined;
        if (!readiness) return 'expired';
      }
    }
  }

  /** Moves a lease's expiry; false when the token is no longer the message's latest lease. */
  async setVisibility(group: string, stream: string, seq: number, token: string, expiresAt: number, now: number): Promise<boolean> {
    // FIFO shards: the index entry must be no later than the lease's new expiry. An entry already
    // early enough is left alone (a longer lease: one early look, then the claim moves it); a later
    // one is lowered to the new expiry; "ready now" is always safe and ends the attempts.
    const variants: Array<'plain' | 'keep' | 'lower' | 'now'> = !isShardStream(stream)
      ? ['plain']
      : expiresAt > now
        ? ['keep', 'lower', 'keep', 'now']
        : ['now'];
    for (const variant of variants) {
      const values: Record<string, unknown> = { ':e': expiresAt, ':k': token };
      let update = 'SET fl.#s.e = :e';
      let condition = 'fl.#s.k = :k AND attribute_not_exists(fl.#s.c)';
      if (variant === 'keep') {
        condition += ' AND g1sk <= :at';
        values[':at'] = readyAtKey(expiresAt);
      } else if (variant === 'lower') {
        update += ', g1pk = :rk, g1sk = :at';
        condition += ' AND (attribute_not_exists(g1sk) OR g1sk > :at)';
        values[':at'] = readyAtKey(expiresAt);
        values[':rk'] = readyIndexPk(group);
      } else if (variant === 'now') {
        update += ', g1pk = :rk, g1sk = :at';
        values[':at'] = readyNowKey(stream);
        values[':rk'] = readyIndexPk(group);
      }
      try {
        await call(() =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: cursorPk(group), sk: stream },
              UpdateExpression: update,
              ConditionExpression: condition,
              ExpressionAttributeNames: { '#s': String(seq) },
              ExpressionAttributeValues: values,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return true;
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        const lease = (oldImage(error)?.fl as Record<string, StoredLease> | undefined)?.[String(seq)];
        if (!lease || lease.k !== token || lease.c === 1) return false;
        // Only the index condition failed: try the next variant.
      }
    }
    return false;
  }

  /** The transaction item that closes a lease as dead-lettered (written with the dead-letter append). */
  deadLetterItem(group: string, stream: string, done: DoneEntry, token: string, now: number): TransactItem {
    const shard = isShardStream(stream);
    return {
      Update: {
        TableName: this.table,
        Key: { pk: cursorPk(group), sk: stream },
        UpdateExpression: `SET dn.#s = :done${shard ? ', g1pk = :rk, g1sk = :rs' : ''} REMOVE fl.#s ADD dl :one`,
        // Not a lease whose (protected) commit went pending meanwhile.
        ConditionExpression: 'fl.#s.k = :k AND attribute_not_exists(fl.#s.c)',
        ExpressionAttributeNames: { '#s': String(done.seq) },
        ExpressionAttributeValues: {
          ':done': storedDone(done),
          ':k': token,
          ':one': 1,
          ...(shard ? { ':rk': readyIndexPk(group), ':rs': readyNowKey(stream) } : {}),
        },
      },
    };
  }

  /**
   * A notice announced messages `from`…`to` of a FIFO shard: raise the group's
   * known head and put the shard on the ready index, creating the shard cursor
   * at `from` (a number, or computed on demand) the first time the group hears
   * of the shard. Idempotent.
   */
  async raiseKnown(group: string, stream: string, from: number | (() => Promise<number>), to: number, now: number): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await call(() =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: cursorPk(group), sk: stream },
              UpdateExpression: 'SET kn = :to, g1pk = :rk, g1sk = :rs',
              ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(kn) OR kn < :to)',
              ExpressionAttributeValues: { ':to': to, ':rk': readyIndexPk(group), ':rs': readyNowKey(stream) },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return;
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
        if (oldImage(error) !== undefined) return; // already knows at least `to`
      }
      // Where the new cursor starts may take reads to find out (see Receiver): only now that it is needed.
      const start = typeof from === 'number' ? from : await from();
      try {
        await call(() =>
          this.doc.send(
            new PutCommand({
              TableName: this.table,
              Item: {
                pk: cursorPk(group),
                sk: stream,
                nx: start,
                ns: start,
                kn: to,
                fl: {},
                dn: {},
                cm: 0,
                dl: 0,
                ca: now,
                g1pk: readyIndexPk(group),
                g1sk: readyNowKey(stream),
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        );
        return;
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
      }
    }
  }

  /** Moves a lease-less cursor (notice streams) forward; false when someone else moved it first. */
  async advance(group: string, stream: string, expectNext: number, next: number, segmentStart: number): Promise<boolean> {
    return conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: cursorPk(group), sk: stream },
          UpdateExpression: 'SET nx = :nx, ns = :ns',
          ConditionExpression: 'nx = :old',
          ExpressionAttributeValues: { ':nx': next, ':ns': segmentStart, ':old': expectNext },
        }),
      ),
    );
  }

  /**
   * Up to `limit` FIFO shard cursors of `group` that are ready (`readyAt <= now`). Eventually
   * consistent. A ready shard keeps its key while it stays ready, so the first page alone would
   * serve the same shards again and again: when there are more than a page, reading also starts
   * at a random point (`spread`, in [0, 1)) of the "ready now" keys, wrapping to the first page.
   */
  async ready(group: string, now: number, limit: number, spread = Math.random()): Promise<string[]> {
    const page = (from?: string) =>
      call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: GSI1,
            KeyConditionExpression: `g1pk = :pk AND g1sk ${from === undefined ? '<= :now' : 'BETWEEN :from AND :now'}`,
            ExpressionAttributeValues: { ':pk': readyIndexPk(group), ':now': readyAtKey(now), ...(from === undefined ? {} : { ':from': from }) },
            Limit: limit,
          }),
        ),
      );
    const first = await page();
    let items = first.Items ?? [];
    if (first.LastEvaluatedKey !== undefined) {
      const from = await page(readyNowKeyAt(Math.floor(Math.min(Math.max(spread, 0), 1 - 2 ** -32) * 2 ** 32)));
      const seen = new Set<string>();
      items = [...(from.Items ?? []), ...items].filter((item) => !seen.has(String(item.sk)) && seen.add(String(item.sk)) !== undefined);
      items = items.slice(0, limit);
    }
    return items.filter((item) => String(item.pk) === cursorPk(group)).map((item) => String(item.sk));
  }
}

/** Attempts of a commit write: the claim's guess, the state a failed attempt saw, then ready now unconditionally. */
const COMMIT_ATTEMPTS = 3;

const firstGuess = (tokens: string[]): CommitReadiness => ({ readiness: combinedHint(tokens) ?? 'ready', guarded: true });

/**
 * After a commit of `entries` failed its condition: when every lease is still
 * there with its token, only the readiness guess was wrong — the write to try
 * next, decided from the old image (the last attempt: ready now, unconditionally).
 * Undefined when a lease is gone or changed (the commit itself failed).
 */
const retryReadiness = (
  old: Record<string, unknown>,
  entries: Array<{ seq: number; token: string }>,
  attempt: number,
): CommitReadiness | undefined => {
  const fl = (old.fl as Record<string, StoredLease> | undefined) ?? {};
  if (!entries.every((e) => fl[String(e.seq)]?.k === e.token)) return undefined;
  if (attempt >= COMMIT_ATTEMPTS - 1) return { readiness: 'ready', guarded: false };
  const known = old.kn === undefined ? undefined : Number(old.kn);
  return { readiness: readinessAfterCompletion(known, Number(old.nx), Object.keys(fl).length - entries.length), guarded: true };
};
