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
import { deliveriesOfToken, type CursorState, type DoneEntry, type DoneOutcome, type Lease } from '../../domain/cursor.js';
import { isShardStream } from '../../domain/streams.js';
import { GSI1 } from './table.js';
import { call } from './call.js';
import { isConditionalFailure } from './errors.js';
import type { TransactItem } from './stream-log.js';

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

const cursorPk = (group: string) => `C#${group}`;
const outputsPk = (group: string, stream: string) => `O#${group}#${stream}`;

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
    group: String(item.pk).slice(2),
    stream: String(item.sk),
    next: Number(item.nx),
    segmentStart: Number(item.ns),
    leases,
    done,
    committed: Number(item.cm ?? 0),
    deadLettered: Number(item.dl ?? 0),
    known: item.kn === undefined ? undefined : Number(item.kn),
    readyAt: item.g1sk === undefined ? undefined : Number(item.g1sk),
  };
};

/** Ready-index keys of FIFO shard cursors (gsi1): `R#<group>` / zero-padded ready time. */
export const readyPk = (group: string) => `R#${group}`;
export const readySk = (at: number) => Math.max(0, Math.floor(at)).toString().padStart(13, '0');

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
  /** FIFO shard cursors only: the new known head and ready time, guarded by what the plan read. */
  shard?: { expectKnown: number | undefined; expectInFlight: number; known: number; readyAt: number | undefined };
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

  /** Cursors of `group` on the named streams (consistent reads; missing ones are left out). */
  async getMany(group: string, streams: string[]): Promise<Map<string, CursorState>> {
    const out = new Map<string, CursorState>();
    for (let i = 0; i < streams.length; i += 100) {
      let keys: Record<string, unknown>[] = streams.slice(i, i + 100).map((sk) => ({ pk: cursorPk(group), sk }));
      for (let round = 0; keys.length > 0; round++) {
        const result = await call(() =>
          this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } })),
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
    const out: CursorState[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': cursorPk(group) },
            ExclusiveStartKey: start,
            ConsistentRead: true,
          }),
        ),
      );
      out.push(...(result.Items ?? []).map(toState));
      start = result.LastEvaluatedKey;
    } while (start !== undefined);
    return out;
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
      if (replaces !== undefined) conditions.push(`${fl()}.${seq}.k = ${x.value(replaces)}`);
    }
    for (const { done, replaces } of change.close) {
      const seq = x.name(String(done.seq));
      removes.push(`${fl()}.${seq}`);
      sets.push(`${dn()}.${seq} = ${x.value(storedDone(done))}`);
      conditions.push(`${fl()}.${seq}.k = ${x.value(replaces)}`);
    }
    for (const seq of change.forgetDone) removes.push(`${dn()}.${x.name(String(seq))}`);
    if (change.shard) {
      const { shard } = change;
      sets.push(`kn = ${x.value(shard.known)}`);
      if (shard.readyAt === undefined) removes.push('g1pk', 'g1sk');
      else sets.push(`g1pk = ${x.value(readyPk(group))}`, `g1sk = ${x.value(readySk(shard.readyAt))}`);
      // Readiness may only be dropped or delayed if no notice raised the head and no commit freed a slot meanwhile.
      conditions.push(
        shard.expectKnown === undefined ? 'attribute_not_exists(kn)' : `kn = ${x.value(shard.expectKnown)}`,
        `size(${fl()}) = ${x.value(shard.expectInFlight)}`,
      );
    }
    try {
      await call(() =>
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
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
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
    if (entries.length > 1 && (await this.commitAll(group, stream, entries, now))) return entries.map(() => 'committed');
    const out: CommitOutcome[] = [];
    for (const entry of entries) out.push(await this.commitOne(group, stream, entry, now));
    return out;
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
        Item: { pk: outputsPk(group, stream), sk: String(seq), p: JSON.stringify(outputs), ttl: ttlSeconds },
      },
    };
  }

  pendingOutputsDelete(group: string, stream: string, seq: number): TransactItem {
    return { Delete: { TableName: this.table, Key: { pk: outputsPk(group, stream), sk: String(seq) } } };
  }

  async pendingOutputs(group: string, stream: string, seqs: number[]): Promise<Map<number, unknown[]>> {
    const out = new Map<number, unknown[]>();
    for (const seq of seqs) {
      const { Item } = await call(() =>
        this.doc.send(
          new GetCommand({ TableName: this.table, Key: { pk: outputsPk(group, stream), sk: String(seq) }, ConsistentRead: true }),
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
      // A completed message may unblock the shard: put it on the group's ready index.
      sets.push(`g1pk = ${x.value(readyPk(group))}`, `g1sk = ${x.value(readySk(change.now))}`);
    }
    const adds = change.complete.length > 0 ? ` ADD cm ${x.value(change.complete.length)}` : '';
    return {
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}${adds}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: x.names,
      ExpressionAttributeValues: x.values,
    };
  }

  private async commitAll(group: string, stream: string, entries: Array<{ seq: number; token: string }>, now: number) {
    const unique = [...new Map(entries.map((e) => [e.seq, e])).values()];
    if (unique.length !== entries.length) return false;
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            ...this.completion(group, stream, { complete: entries, now }),
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  private async commitOne(group: string, stream: string, entry: { seq: number; token: string }, now: number): Promise<CommitOutcome> {
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            ...this.completion(group, stream, { complete: [entry], now }),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return 'committed';
    } catch (error) {
      if (!isConditionalFailure(error)) throw error;
      const old = oldImage(error);
      const done = (old?.dn as Record<string, StoredDone> | undefined)?.[String(entry.seq)];
      return done !== undefined && done.k === entry.token && done.o === 'committed' ? 'committed' : 'expired';
    }
  }

  /** Moves a lease's expiry; false when the token is no longer the message's latest lease. */
  async setVisibility(group: string, stream: string, seq: number, token: string, expiresAt: number, now: number): Promise<boolean> {
    const shard = isShardStream(stream);
    try {
      await call(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: cursorPk(group), sk: stream },
            UpdateExpression: `SET fl.#s.e = :e${shard ? ', g1pk = :rk, g1sk = :rs' : ''}`,
            ConditionExpression: 'fl.#s.k = :k AND attribute_not_exists(fl.#s.c)',
            ExpressionAttributeNames: { '#s': String(seq) },
            ExpressionAttributeValues: {
              ':e': expiresAt,
              ':k': token,
              ...(shard ? { ':rk': readyPk(group), ':rs': readySk(Math.min(expiresAt, now)) } : {}),
            },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /** The transaction item that closes a lease as dead-lettered (written with the dead-letter append). */
  deadLetterItem(group: string, stream: string, done: DoneEntry, token: string, now: number): TransactItem {
    const shard = isShardStream(stream);
    return {
      Update: {
        TableName: this.table,
        Key: { pk: cursorPk(group), sk: stream },
        UpdateExpression: `SET dn.#s = :done${shard ? ', g1pk = :rk, g1sk = :rs' : ''} REMOVE fl.#s ADD dl :one`,
        ConditionExpression: 'fl.#s.k = :k',
        ExpressionAttributeNames: { '#s': String(done.seq) },
        ExpressionAttributeValues: {
          ':done': storedDone(done),
          ':k': token,
          ':one': 1,
          ...(shard ? { ':rk': readyPk(group), ':rs': readySk(now) } : {}),
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
              ExpressionAttributeValues: { ':to': to, ':rk': readyPk(group), ':rs': readySk(now) },
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
                g1pk: readyPk(group),
                g1sk: readySk(now),
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
    try {
      await call(() =>
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
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /** FIFO shard cursors of `group` that are ready (`readyAt <= now`), oldest first. Eventually consistent. */
  async ready(group: string, now: number, limit: number): Promise<string[]> {
    const { Items } = await call(() =>
      this.doc.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI1,
          KeyConditionExpression: 'g1pk = :pk AND g1sk <= :now',
          ExpressionAttributeValues: { ':pk': readyPk(group), ':now': readySk(now) },
          Limit: limit,
        }),
      ),
    );
    return (Items ?? []).filter((item) => String(item.pk) === cursorPk(group)).map((item) => String(item.sk));
  }
}
