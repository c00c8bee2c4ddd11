/**
 * A cursor is one consumer group's position in one stream, together with the
 * leases it has handed out there. Leases live inside the cursor item, so a
 * receive of N messages from a stream is one conditional write, and a commit
 * of N messages of a stream is one conditional write (docs/design.md).
 *
 * Lease timeline of one message in one group:
 *
 *   receive            visibility timeout            receive again
 *   ──●───────────────────────────────────────────────●──────────▶
 *     lease{token A, d=1, e=t0+vt}                    lease{token B, d=2}
 *         commit(A) ✔ until B replaces A;  commit(A) after that ✘ ReceiptHandleExpired
 */
export interface Lease {
  seq: number;
  /** Lease expiry (ms). */
  expiresAt: number;
  /** Fencing token: only the handle carrying it may commit or change visibility. */
  token: string;
  /** How many times the message has been delivered to this group (this delivery included). */
  deliveries: number;
  /** First sequence number of the segment holding the message (to fetch it again). */
  segment: number;
  /** The message's topic when the stream spans several topics (time-order groups). */
  topic: string | undefined;
  /** Protected mode: committed by its receiver, waiting for older messages to complete. */
  pending: boolean;
  /**
   * Its holder gave it back (visibility 0: true) rather than letting it expire; false when a later
   * visibility change extended it again; absent when no visibility change touched this lease.
   */
  released?: boolean;
  /**
   * A member of a range claim (docs/design.md, Range claims): stored as the range `fr.<id>` =
   * start, `fq.<id>` = {n, e}, not as a lease of its own; `segment` is then unknown (-1). Every
   * write that touches a member but a commit of the whole range first writes the range out as
   * ordinary leases (range-normaliser.ts).
   */
  range?: RangeOfLease;
}

/** The range a lease belongs to: its id (the grant's random part), first sequence number and size. */
export interface RangeOfLease {
  id: string;
  start: number;
  n: number;
}

/** The segment of a range member's lease: not stored with the range (range-normaliser.ts finds it). */
export const UNKNOWN_SEGMENT = -1;

/** Most messages one range claim grants (a claim asking for more takes one range of this many). */
export const RANGE_MAX_MESSAGES = 10;

/**
 * The token of every member of range `id` (docs/design.md, Range claims): a first delivery
 * (`1.`), the range's id, start and size (`*`-separated: base64url has no `*`), so a commit of
 * the whole range needs no read to find it, and the seek epoch the range was granted in.
 */
export const rangeToken = (range: RangeOfLease, seekEpoch = 0): string => leaseToken(1, `${range.id}*${range.start}*${range.n}`, seekEpoch);

/** The range a lease token names (undefined: an ordinary lease's token). */
export const rangeOfToken = (token: string): RangeOfLease | undefined => {
  const m = /^1\.([A-Za-z0-9_-]+)\*(\d+)\*(\d+)(?:$|[~.])/.exec(token);
  if (!m) return undefined;
  const start = Number(m[2]);
  const n = Number(m[3]);
  return Number.isSafeInteger(start) && Number.isSafeInteger(n) && n > 0 ? { id: m[1]!, start, n } : undefined;
};

/** Ranges a cursor holds (each once), from its expanded leases. */
export const rangesOf = (cursor: Pick<CursorState, 'leases'>): Array<RangeOfLease & { expiresAt: number }> => {
  const out = new Map<string, RangeOfLease & { expiresAt: number }>();
  for (const lease of cursor.leases.values()) if (lease.range && !out.has(lease.range.id)) out.set(lease.range.id, { ...lease.range, expiresAt: lease.expiresAt });
  return [...out.values()];
};

export const DoneOutcome = { committed: 'committed', deadLettered: 'dead-lettered', expired: 'expired' } as const;
export type DoneOutcome = (typeof DoneOutcome)[keyof typeof DoneOutcome];

/** A completed message, kept (in `dn`, then in history chunks) so that a repeated commit answers "committed" again. */
export interface DoneEntry {
  seq: number;
  /** The completing lease's token: known to the writer; stored completions keep only `deliveries` (history.ts). */
  token?: string;
  at: number;
  outcome: DoneOutcome;
  deliveries: number;
  /**
   * The seek epoch of the completing lease (its token says it; absent: 0). With `deliveries` it
   * names the lease: a seek restarts deliveries at 1 and bumps the epoch (docs/design.md, Seek).
   */
  epoch?: number;
  /**
   * The completions of a whole range's commit, stored as one entry of `dn` (docs/design.md, Range
   * claims, "One completion a range"): its first sequence number and how many; every member's entry names it.
   */
  run?: { start: number; n: number };
}

export interface CursorState {
  group: string;
  stream: string;
  /** Next sequence number never yet delivered to this group. */
  next: number;
  /** First sequence number of the segment that holds `next` (or `next` at a segment boundary). */
  segmentStart: number;
  leases: Map<number, Lease>;
  done: Map<number, DoneEntry>;
  /**
   * Every key of `dn` as read and the numbers it holds completions of (a completion's own key: 1; a
   * run, a whole range's commit: n; docs/design.md, Range claims, "One completion a range"), where
   * any run is among them — replaced by later completions or not. A key leaves `dn` only with every
   * key sharing a number with it (cursor-item.ts `completionKeys`): removing one alone would bring
   * back an earlier completion under it.
   */
  storedKeys?: Map<string, { start: number; n: number }>;
  committed: number;
  deadLettered: number;
  /** FIFO shard cursors: the highest sequence number announced by notices. */
  known: number | undefined;
  /** FIFO shard cursors: when the shard next has work (ready index; 0 = ready now), undefined when idle. */
  readyAt: number | undefined;
  /** FIFO shard cursors: the ready-index key as stored, to leave it alone when readiness does not change. */
  readyKey?: string | undefined;
  /**
   * FIFO shard cursors of wide topics: the ready-index partition key the cursor's entry goes under
   * (`rk`: `R#<group>#<0..63>`, keys.ts `readyBucketPk`); undefined: the group's home key `R#<group>`.
   */
  readyPk?: string | undefined;
  /** History mark `hw`: completions up to it were spilled into history chunks, or are still in `done` (history.ts). */
  historyMark?: number | undefined;
  /** When the cursor was created (ms): a group created again under the same name starts a history of its own. */
  createdAt?: number | undefined;
  /** FIFO shard cursors: `ttl` (epoch s); the cursor counts as absent from then on (docs/design.md, Idle shards expire). */
  expiresAtSeconds?: number | undefined;
  /** FIFO shard cursors: the first sequence number of the latest epoch a notice announced (`ke`). */
  epochStart?: number | undefined;
  /**
   * FIFO notice cursors after a seek (docs/design.md, Seek): how many seeks moved the namespace
   * (`sv`), and where shard cursors created from now on start — at the first message deliverable
   * at or after `seekFloor` ms (`sf`; 0: the first retained one).
   */
  seek?: { version: number; floor: number } | undefined;
  /**
   * How many seeks moved this cursor (`se`; absent: 0). Leases granted from it carry it in their
   * token, completions keep it: a handle of an earlier epoch never matches a later completion.
   */
  seekEpoch?: number | undefined;
  /**
   * FIFO shard cursors: how many visibility changes (releases, extensions, shortened leases) were
   * written to it (`vv`; absent: 0). A claim of a concurrent group that changes neither the shard's
   * readiness nor its known head is conditional on it instead of the whole lease map, so commits
   * made meanwhile do not make it lose (docs/design.md, "Commits pass claims").
   */
  visibilityVersion?: number | undefined;
  /** The item has the range maps `fr`/`fq` a range claim writes into (docs/design.md, Range claims); once there they stay. */
  rangeMaps?: true | undefined;
  /** `nl`: range claims moved `nx` since `ns` was written, so `ns` may be segments below it (docs/design.md, Range claims). */
  segmentStartLags?: true | undefined;
}

/** Whether a cursor has expired (only FIFO shard cursors carry a `ttl`): read as absent. */
export const cursorExpired = (cursor: Pick<CursorState, 'expiresAtSeconds'>, now: number): boolean =>
  cursor.expiresAtSeconds !== undefined && cursor.expiresAtSeconds * 1000 <= now;

/** The most leases one cursor holds at once (keeps the cursor item, and its write cost, small). */
export const MAX_IN_FLIGHT_PER_STREAM = 100;


/**
 * A lease's fencing token: `<deliveries>.<random>`, and `~<epoch>` after it once a seek moved the
 * cursor (epoch ≥ 1; docs/design.md, Seek: which lease a completion belongs to). Random parts are
 * base64url, without `.` or `~`; a claim may append `.<mark>` later (a readiness hint).
 */
export const leaseToken = (deliveries: number, random: string, seekEpoch = 0): string =>
  seekEpoch > 0 ? `${deliveries}.${random}~${seekEpoch}` : `${deliveries}.${random}`;

/** A completion's `epoch` field for a lease of `token`: absent in epoch 0 (as completions before seeks existed). */
export const completionEpoch = (token: string): { epoch?: number } => {
  const epoch = seekEpochOfToken(token);
  return epoch > 0 ? { epoch } : {};
};

/** The seek epoch a lease token was granted in (0: before any seek of its cursor, or an older token). */
export const seekEpochOfToken = (token: string): number => {
  // Marks may follow it (a readiness hint appends `.<mark>` to FIFO tokens).
  const n = Number(/~(\d+)/.exec(token)?.[1] ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
};

export const deliveriesOfToken = (token: string): number => {
  const n = Number(token.split('.', 1)[0]);
  return Number.isInteger(n) && n > 0 ? n : 1;
};

/** Leases whose visibility timeout has passed (pending commits excepted), oldest message first. */
export const expiredLeases = (cursor: CursorState, now: number): Lease[] =>
  [...cursor.leases.values()].filter((lease) => !lease.pending && lease.expiresAt <= now).sort((a, b) => a.seq - b.seq);

/** Leases in sequence order. */
export const leasesInOrder = (cursor: CursorState): Lease[] => [...cursor.leases.values()].sort((a, b) => a.seq - b.seq);


/** Does a message with `tag` pass a subscription's tag filter? (No filter: everything.) */
export const tagMatches = (filter: readonly string[] | undefined, tag: string | undefined): boolean =>
  filter === undefined || filter.length === 0 || filter.includes('*') || (tag !== undefined && filter.includes(tag));
