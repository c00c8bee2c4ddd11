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
}

export const DoneOutcome = { committed: 'committed', deadLettered: 'dead-lettered', expired: 'expired' } as const;
export type DoneOutcome = (typeof DoneOutcome)[keyof typeof DoneOutcome];

/** A recently completed message, kept so that a repeated commit answers "committed" again. */
export interface DoneEntry {
  seq: number;
  token: string;
  at: number;
  outcome: DoneOutcome;
  deliveries: number;
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
  committed: number;
  deadLettered: number;
  /** FIFO shard cursors: the highest sequence number announced by notices. */
  known: number | undefined;
  /** FIFO shard cursors: when the shard next has work (ready index; 0 = ready now), undefined when idle. */
  readyAt: number | undefined;
  /** FIFO shard cursors: the ready-index sort key as stored (`g1sk`), to leave it alone when readiness does not change. */
  readySk?: string | undefined;
}

/** The most leases one cursor holds at once (keeps the cursor item, and its write cost, small). */
export const MAX_IN_FLIGHT_PER_STREAM = 100;

/** How many completed entries a cursor remembers for idempotent repeats of commit. */
export const DONE_MEMORY = 16;

export const leaseToken = (deliveries: number, random: string): string => `${deliveries}.${random}`;

/**
 * What a commit should do to a FIFO shard's ready-index entry, from the cursor after it:
 * `ready`  known messages after `nx` (the shard may have been blocked: put it on the index, ready now);
 * `keep`   nothing after `nx` but leases remain (their expiry is indexed already: leave the entry alone);
 * `drop`   nothing after `nx` and no lease left (idle until a notice: leave the index).
 */
export type Readiness = 'ready' | 'keep' | 'drop';
export const readinessAfterCompletion = (known: number | undefined, next: number, leasesLeft: number): Readiness =>
  known === undefined || known >= next ? 'ready' : leasesLeft > 0 ? 'keep' : 'drop';

/**
 * FIFO lease tokens carry the claim's guess of what their commit will do to
 * the ready index (`<deliveries>.<random>.<r|k|d>`). Only a guess: the commit
 * writes it under conditions that prove it, and otherwise decides again from
 * the cursor (docs/design.md, Ready index).
 */
const HINTS: Record<string, Readiness> = { r: 'ready', k: 'keep', d: 'drop' };
export const hintedToken = (token: string, readiness: Readiness): string => `${token}.${readiness[0]}`;
export const readinessHint = (token: string): Readiness | undefined => HINTS[token.split('.')[2] ?? ''];
/** One write commits several leases of a stream: `ready` if any says so, else `drop` if any, else `keep`. */
export const combinedHint = (tokens: string[]): Readiness | undefined => {
  const hints = tokens.map(readinessHint);
  if (hints.includes('ready') || hints.includes(undefined)) return hints.every((h) => h === undefined) ? undefined : 'ready';
  return hints.includes('drop') ? 'drop' : 'keep';
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

/** Done entries to forget so that at most DONE_MEMORY remain after adding `adding` more. */
export const doneToForget = (cursor: CursorState, adding: number): number[] => {
  const seqs = [...cursor.done.keys()].sort((a, b) => a - b);
  const excess = seqs.length + adding - DONE_MEMORY;
  return excess > 0 ? seqs.slice(0, excess) : [];
};

/** Does a message with `tag` pass a subscription's tag filter? (No filter: everything.) */
export const tagMatches = (filter: readonly string[] | undefined, tag: string | undefined): boolean =>
  filter === undefined || filter.length === 0 || filter.includes('*') || (tag !== undefined && filter.includes(tag));
