/**
 * The cursor item: one per (consumer group, stream), pk `C#<group>`, sk
 * `<stream>` (keys.ts). Leases live inside it, so a receive of N messages
 * from a stream and a commit of N messages of a stream are one conditional
 * write each (docs/design.md, Cursors and leases).
 *
 *   nx    next sequence number never delivered to the group
 *   ns    first sequence number of the segment holding nx (where reading resumes)
 *   fl    leases in flight: { "<seq>": StoredLease } — see below
 *   dn    completions not yet spilled into history: { "<seq>": StoredDone } — see below; the
 *         commit of a whole range stores its members as one entry `"r<start>.<epoch>": [number, epoch, n]`
 *         (its own key: a replay after a seek, as a run or one by one, never replaces it)
 *   hw    history mark: completions up to it are in history chunks or in `dn` (history.ts)
 *   cm    count of committed messages
 *   dl    count of dead-lettered messages
 *   ca    created at (ms); also names the cursor's history (keys.ts)
 *   FIFO shard cursors also:
 *   kn    known head: the highest sequence number notices announced
 *   g1pk, g1sk   the ready index (ready-index.ts): `rk` if present, else `R#<group>`, and
 *                when the shard next has work; absent while the shard is idle
 *   rk    shard cursors of wide FIFO topics only: their ready-index partition key,
 *         `R#<group>#<0..63>` (keys.ts `readyBucketPk`). Written when the cursor is created and by
 *         notice raises; every other write of `g1pk` sets `if_not_exists(rk, R#<group>)`, so
 *         cursors without it (default topics, earlier versions) keep the home key
 *   ttl   expiry (epoch s): now + the longest retention + 1 day, set by its creation, every
 *         notice raise and every claim, so later than every message it knows or leases;
 *         from then on the cursor is read as absent (docs/design.md, Idle shards expire)
 *   ke    the first sequence number of the latest epoch a notice announced (statistics)
 *   vv    how many visibility changes were written (absent: 0): claims that pass commits are
 *         conditional on it instead of on the whole of `fl` (docs/design.md, "Commits pass claims")
 *   fr, fq  range claims of concurrent groups (docs/design.md, Range claims): `fr.<id>` the first
 *         sequence number of a range granted by arithmetic (`SET fr.<id> = nx ADD nx :n`), `fq.<id>`
 *         `{n, e}` its size and lease expiry; each member is read as a lease (token `rangeToken`)
 *   nl    1 once a range claim moved `nx` without `ns`; the next ordinary claim (which writes `ns`) removes it
 *
 *   FIFO notice cursors, once a seek moved their namespace:
 *   sv    how many seeks moved the namespace (shard cursors are created conditional on it)
 *   sf    where shard cursors created since start: the first message deliverable at or after it (ms; 0: first retained)
 *
 *   Every cursor a seek moved (partition and shard cursors):
 *   se    its seek epoch: how many seeks moved it; leases carry it in their token, completions keep it
 *         (`[n, se]` in `dn`), so a handle of an earlier epoch never matches a later completion
 *
 * Notice-stream and partition cursors have no `kn` and are never indexed.
 */
import { UNKNOWN_SEGMENT, rangeToken, type CursorState, type DoneEntry, type DoneOutcome, type Lease } from '../../domain/cursor.js';
import { Limits } from '../../domain/model.js';
import { cursorPk, groupOfCursorPk, readyAtOfKey, readyIndexPk } from './keys.js';

/** A lease in `fl`. */
export interface StoredLease {
  /** expiresAt (ms) */
  e: number;
  /** fencing token: only the receipt handle carrying it may commit or change visibility */
  k: string;
  /** deliveries to this group, this one included */
  d: number;
  /** first sequence number of the segment holding the message */
  g: number;
  /** the message's topic, when the stream spans several (time-order groups) */
  t?: string;
  /** 1: protected mode, committed and waiting for older messages (pending) */
  c?: 1;
  /** 1: released by its holder (visibility 0); removed when the lease is extended after that (older cursors: 0); written by visibility changes only */
  r?: 0 | 1;
}

/**
 * A completion in `dn`, one number: `at_ms × 4096 + deliveries × 4 + outcome`
 * (outcome 0 committed, 1 dead-lettered, 2 expired). Deliveries ≤ 1,000 < 1,024
 * (`maxDeliveries`), and at_ms < 2^41 (until September 2039) keeps the number
 * ≤ 2^53, exact in a double. About 10 bytes stored instead of ~55 for the map
 * form earlier versions wrote (`{k, a, o, d}`), which is still read.
 * A completion of a lease granted after a seek of its cursor is the list
 * `[number, epoch]` (the number has no bits left; docs/design.md, Seek).
 */
export type StoredDone = number | [number, number] | StoredRun;

/**
 * The completions of a whole range's commit (docs/design.md, Range claims, "One completion a
 * range"): `[number, epoch (0: none), n]` under `r<first sequence number>.<epoch>` (runKey), one entry for
 * its n members (they share the commit's time, outcome, deliveries and epoch). A hot shard's cursor
 * held 40–150 completions of ~25 bytes each: most of its size, and every write of it is billed by size.
 */
export type StoredRun = [number, number, number];

/** A range's size and lease expiry, in `fq` (its start is `fr.<id>`). */
export interface StoredRange {
  n: number;
  e: number;
}

/** The map form of a completion written by earlier versions (read only). */
interface LegacyStoredDone {
  k: string;
  a: number;
  o: DoneOutcome;
  d: number;
}

const OUTCOME_CODES: Record<DoneOutcome, number> = { committed: 0, 'dead-lettered': 1, expired: 2 };
const OUTCOMES: DoneOutcome[] = ['committed', 'dead-lettered', 'expired'];
const AT_FACTOR = 4096;

export const storedLease = (lease: Lease): StoredLease => {
  const stored: StoredLease = { e: lease.expiresAt, k: lease.token, d: lease.deliveries, g: lease.segment };
  if (lease.topic !== undefined) stored.t = lease.topic;
  if (lease.pending) stored.c = 1;
  // Exactly as read (a renewal's condition compares the whole map): `r` is 1 once a visibility change
  // released it (a later extension removes it); 0 is still read from cursors written before that.
  if (lease.released !== undefined) stored.r = lease.released ? 1 : 0;
  return stored;
};

export const storedDone = (done: DoneEntry): number | [number, number] => {
  const n = done.at * AT_FACTOR + done.deliveries * 4 + OUTCOME_CODES[done.outcome];
  return done.epoch ? [n, done.epoch] : n;
};

/** The one entry of a run of `n` completions like `done` (its first member's). */
export const storedRun = (done: DoneEntry, n: number): StoredRun => {
  const stored = storedDone(done);
  return Array.isArray(stored) ? [stored[0], stored[1], n] : [stored, 0, n];
};

/** The completion of `seq` as stored (the number, `[number, epoch]`, a run's entry for its member `seq`, or an earlier version's map). */
export const doneOfStored = (seq: number, stored: StoredDone | LegacyStoredDone): DoneEntry => {
  if (Array.isArray(stored) && stored.length === 3) return doneOfStored(seq, Number(stored[1]) > 0 ? [Number(stored[0]), Number(stored[1])] : Number(stored[0]));
  if (Array.isArray(stored)) {
    const epoch = Number(stored[1]);
    return { ...doneOfStored(seq, Number(stored[0])), ...(epoch > 0 ? { epoch } : {}) };
  }
  if (typeof stored === 'object' && stored !== null) return { seq, token: stored.k, at: stored.a, outcome: stored.o, deliveries: stored.d };
  const n = Number(stored);
  const low = n % AT_FACTOR;
  return { seq, at: (n - low) / AT_FACTOR, deliveries: Math.floor(low / 4), outcome: OUTCOMES[low % 4] ?? 'expired' };
};

/** Clock skew between containers a shard cursor's `ttl` allows for, beyond the longest retention (s). */
const SHARD_CURSOR_GRACE_SECONDS = 86_400;

/**
 * The `ttl` a write to a FIFO shard cursor at `now` (ms) sets: every message the cursor knows
 * or leases became deliverable before the write, so it expires before this.
 */
export const shardCursorTtl = (now: number): number => Math.ceil(now / 1000) + Limits.retentionMaxSeconds + SHARD_CURSOR_GRACE_SECONDS;

/** A new cursor at `next` with nothing in flight (FIFO shard cursors add `kn` and their index entry). */
export const newCursorItem = (group: string, stream: string, next: number, now: number) => ({
  pk: cursorPk(group),
  sk: stream,
  nx: next,
  ns: next,
  fl: {},
  dn: {},
  cm: 0,
  dl: 0,
  ca: now,
});

/** The stored item of a cursor state (the inverse of {@link toState}). */
export const toItem = (state: CursorState): Record<string, unknown> => {
  const ranges = storedRanges(state.leases);
  const item: Record<string, unknown> = {
    pk: cursorPk(state.group),
    sk: state.stream,
    nx: state.next,
    ns: state.segmentStart,
    fl: Object.fromEntries([...state.leases].filter(([, lease]) => !lease.range).map(([seq, lease]) => [String(seq), storedLease(lease)])),
    ...(ranges ?? (state.rangeMaps ? { fr: {}, fq: {} } : {})),
    dn: storedDn(state),
    cm: state.committed,
    dl: state.deadLettered,
  };
  if (state.historyMark !== undefined) item.hw = state.historyMark;
  if (state.createdAt !== undefined) item.ca = state.createdAt;
  if (state.seek !== undefined) {
    item.sv = state.seek.version;
    item.sf = state.seek.floor;
  }
  if (state.seekEpoch !== undefined) item.se = state.seekEpoch;
  if (state.visibilityVersion !== undefined) item.vv = state.visibilityVersion;
  if (state.segmentStartLags) item.nl = 1;
  if (state.known !== undefined) item.kn = state.known;
  if (state.expiresAtSeconds !== undefined) item.ttl = state.expiresAtSeconds;
  if (state.epochStart !== undefined) item.ke = state.epochStart;
  if (state.readyPk !== undefined) item.rk = state.readyPk;
  if (state.readyKey !== undefined) {
    item.g1pk = state.readyPk ?? readyIndexPk(state.group);
    item.g1sk = state.readyKey;
  }
  return item;
};

const RUN_PREFIX = 'r';
/**
 * The key in `dn` of the run of completions starting at `start` committed in seek epoch `epoch` (a
 * whole range's commit): a replay after a seek commits a run of the same numbers under a key of its own.
 */
export const runKey = (start: number, epoch: number | undefined): string => `${RUN_PREFIX}${start}.${epoch ?? 0}`;
/** The run a key of `dn` names (runKey), or undefined for a completion's own key. */
export const runOfKey = (key: string): { start: number; epoch: number } | undefined => {
  if (!key.startsWith(RUN_PREFIX)) return undefined;
  const [start, epoch] = key.slice(RUN_PREFIX.length).split('.');
  return { start: Number(start), epoch: Number(epoch ?? 0) };
};
/** Whether `entry` is a member of the run `key` names. */
export const memberOf = (entry: DoneEntry | undefined, run: { start: number; epoch: number }): boolean =>
  entry?.run?.start === run.start && (entry.epoch ?? 0) === run.epoch;

/** Whether completion `a` of a number came after `b`: a higher seek epoch, or the same and a later time. */
export const later = (a: DoneEntry, b: DoneEntry): boolean => ((a.epoch ?? 0) !== (b.epoch ?? 0) ? (a.epoch ?? 0) > (b.epoch ?? 0) : a.at > b.at);

/** Keys of `dn` as read that the completions read do not account for (replaced by later ones): placeholders of their size. */
const hiddenEntries = (state: Pick<CursorState, 'storedKeys'>, visible: Record<string, StoredDone>): Record<string, StoredDone> =>
  Object.fromEntries([...(state.storedKeys ?? [])].filter(([key]) => !(key in visible)).map(([key, span]) => [key, key.startsWith(RUN_PREFIX) ? ([0, 0, span.n] as StoredRun) : 0]));

/** `dn` as stored: the completions, and the keys read that they do not account for. */
const storedDn = (state: Pick<CursorState, 'done' | 'storedKeys'>): Record<string, StoredDone> => {
  const visible = storedCompletions(state.done);
  return { ...hiddenEntries(state, visible), ...visible };
};

/** `dn` as stored: a run whose every member is there is one entry under its start, anything else an entry a completion. */
export const storedCompletions = (done: ReadonlyMap<number, DoneEntry>): Record<string, StoredDone> => {
  const stored: Record<string, StoredDone> = {};
  for (const [seq, entry] of done) {
    if (entry.run && wholeRun(done, entry)) {
      if (seq === entry.run.start) stored[runKey(seq, entry.epoch)] = storedRun(entry, entry.run.n);
      continue;
    }
    stored[String(seq)] = storedDone(entry);
  }
  return stored;
};

/** Whether every member of the run `entry` belongs to is in `done`, as a member of it. */
const wholeRun = (done: ReadonlyMap<number, DoneEntry>, entry: DoneEntry): boolean => {
  const run = { start: entry.run!.start, epoch: entry.epoch ?? 0 };
  for (let seq = run.start; seq < run.start + entry.run!.n; seq++) if (!memberOf(done.get(seq), run)) return false;
  return true;
};

/**
 * The keys of `dn` that removing the completions `seqs` removes: a key whose every number is among
 * `seqs`, and only with every key that shares a number with it (a run and the later completions of
 * some of its numbers: removing one alone would bring back the other's). What stays was written to
 * history too, and is there twice: harmless (`dn` is read first); a later spill takes it.
 */
export const completionKeys = (cursor: Pick<CursorState, 'done' | 'storedKeys'>, seqs: readonly number[]): string[] => {
  const removing = new Set(seqs);
  const spans = cursor.storedKeys ?? visibleKeys(cursor.done);
  const candidate = (span: { start: number; n: number }) => {
    for (let seq = span.start; seq < span.start + span.n; seq++) if (!removing.has(seq)) return false;
    return true;
  };
  // Keys that share a number are one group: each leaves with all of them, or none does.
  const group = new Map<string, string>();
  const root = (key: string): string => {
    let at = key;
    while (group.get(at) !== at) at = group.get(at)!;
    return at;
  };
  const byNumber = new Map<number, string>();
  for (const [key, span] of spans) {
    group.set(key, key);
    for (let seq = span.start; seq < span.start + span.n; seq++) {
      const other = byNumber.get(seq);
      if (other === undefined) byNumber.set(seq, key);
      else group.set(root(key), root(other));
    }
  }
  const blocked = new Set<string>();
  for (const [key, span] of spans) if (!candidate(span)) blocked.add(root(key));
  return [...spans].filter(([key, span]) => candidate(span) && !blocked.has(root(key))).map(([key]) => key);
};

/** The keys of `dn` the completions `done` stand for (a run's once): all of them when no run was replaced. */
const visibleKeys = (done: ReadonlyMap<number, DoneEntry>): Map<string, { start: number; n: number }> => {
  const keys = new Map<string, { start: number; n: number }>();
  for (const [seq, entry] of done) {
    if (entry.run) keys.set(runKey(entry.run.start, entry.epoch), entry.run);
    else keys.set(String(seq), { start: seq, n: 1 });
  }
  return keys;
};

/** The ranges among `leases`, as stored (`fr`, `fq`); undefined when there are none. */
export const storedRanges = (leases: ReadonlyMap<number, Lease>): { fr: Record<string, number>; fq: Record<string, StoredRange> } | undefined => {
  const fr: Record<string, number> = {};
  const fq: Record<string, StoredRange> = {};
  for (const lease of leases.values()) {
    if (!lease.range) continue;
    fr[lease.range.id] = lease.range.start;
    fq[lease.range.id] = { n: lease.range.n, e: lease.expiresAt };
  }
  return Object.keys(fr).length > 0 ? { fr, fq } : undefined;
};

/** The domain view of a stored cursor item. */
export const toState = (item: Record<string, unknown>): CursorState => {
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
      ...(l.r === undefined ? {} : { released: l.r === 1 }),
    });
  }
  // Range claims: each member reads as a first delivery's lease (docs/design.md, Range claims).
  const starts = (item.fr as Record<string, unknown> | undefined) ?? {};
  const metas = (item.fq as Record<string, StoredRange | undefined> | undefined) ?? {};
  const seekEpoch = item.se === undefined ? 0 : Number(item.se);
  for (const [id, startValue] of Object.entries(starts)) {
    const meta = metas[id];
    if (meta === undefined) continue;
    const range = { id, start: Number(startValue), n: Number(meta.n) };
    const token = rangeToken(range, seekEpoch);
    for (let seq = range.start; seq < range.start + range.n; seq++) {
      if (leases.has(seq)) continue;
      leases.set(seq, { seq, expiresAt: Number(meta.e), token, deliveries: 1, segment: UNKNOWN_SEGMENT, topic: undefined, pending: false, range });
    }
  }
  const done = new Map<number, DoneEntry>();
  // A whole range's completions are one entry, each member read as its own (naming the run). A
  // number may have a completion of its own besides (a seek replayed it, before or after the run):
  // the later one counts — the higher seek epoch, then the later time.
  const put = (entry: DoneEntry) => {
    const other = done.get(entry.seq);
    if (other === undefined || later(entry, other)) done.set(entry.seq, entry);
  };
  const runs = new Map<string, { start: number; n: number; epoch: number }>();
  for (const [key, d] of Object.entries((item.dn as Record<string, StoredDone | LegacyStoredDone> | undefined) ?? {})) {
    const named = runOfKey(key);
    if (named === undefined || !Array.isArray(d) || d.length !== 3) {
      put(doneOfStored(Number(key), d as StoredDone | LegacyStoredDone));
      continue;
    }
    const run = { start: named.start, n: Number(d[2]) };
    runs.set(key, { ...run, epoch: named.epoch });
    for (let seq = run.start; seq < run.start + run.n; seq++) put({ ...doneOfStored(seq, d), run });
  }
  // Where any run is stored: every key and the numbers it covers, replaced by later completions or not.
  let storedKeys: Map<string, { start: number; n: number }> | undefined;
  if (runs.size > 0) {
    storedKeys = new Map();
    for (const key of Object.keys((item.dn as Record<string, unknown> | undefined) ?? {})) {
      const run = runs.get(key);
      storedKeys.set(key, run ? { start: run.start, n: run.n } : { start: Number(key), n: 1 });
    }
  }
  return {
    group: groupOfCursorPk(String(item.pk)),
    stream: String(item.sk),
    next: Number(item.nx),
    segmentStart: Number(item.ns),
    leases,
    done,
    ...(storedKeys ? { storedKeys } : {}),
    committed: Number(item.cm ?? 0),
    deadLettered: Number(item.dl ?? 0),
    known: item.kn === undefined ? undefined : Number(item.kn),
    readyAt: item.g1sk === undefined ? undefined : readyAtOfKey(String(item.g1sk)),
    readyKey: item.g1sk === undefined ? undefined : String(item.g1sk),
    ...(item.rk === undefined ? {} : { readyPk: String(item.rk) }),
    ...(item.hw === undefined ? {} : { historyMark: Number(item.hw) }),
    ...(item.ca === undefined ? {} : { createdAt: Number(item.ca) }),
    ...(item.ttl === undefined ? {} : { expiresAtSeconds: Number(item.ttl) }),
    ...(item.ke === undefined ? {} : { epochStart: Number(item.ke) }),
    ...(item.sv === undefined ? {} : { seek: { version: Number(item.sv), floor: Number(item.sf ?? 0) } }),
    ...(item.se === undefined ? {} : { seekEpoch: Number(item.se) }),
    ...(item.vv === undefined ? {} : { visibilityVersion: Number(item.vv) }),
    ...(item.fq === undefined ? {} : { rangeMaps: true as const }),
    ...(item.nl === undefined ? {} : { segmentStartLags: true as const }),
  };
};
