/**
 * A per-container cache of cursors a receive plans from: partition cursors
 * (standard topics' partition streams and a group's redrive stream) and FIFO
 * shard cursors (never notice cursors): what this container last read or wrote
 * for (group, stream), used by receive instead of a read while it is at most
 * `maxAgeMs` old (docs/design.md, Receive: the cursor cache).
 *
 * It only saves reads. Every write planned from a cached cursor is
 * conditional on what the entry says (`nx`, the seek epoch `se`, each lease
 * it renews or closes, the history mark; on shards also the known head `kn`,
 * the whole lease map and the ready-index key — or, for a concurrent group's
 * claim that changes neither readiness nor `kn`, the visibility count `vv` and
 * the ready-index key: docs/design.md, "Commits pass claims"), as with any eventually
 * consistent read: a stale entry makes the claim fail, the receiver plans
 * again from the cursor the failed write returned, and the stream is left to
 * plain reads for `CONTENDED_MS` (several containers claim there; the cache
 * would only cost failed writes). A shard claim planned from an entry that
 * finds nothing to write reads the cursor before it gives up (receiver.ts).
 *
 * Entries are stamped with the time the read or write that produced them was
 * sent (so an entry is never younger than the item state it holds, give or
 * take eventual consistency), and a newer stamp wins. An entry belongs to one
 * incarnation of its group (the group's `createdAt`): a group deleted and
 * created again under the same name never sees the old group's cursors.
 */
import type { CursorState } from '../../domain/cursor.js';

export interface CursorCacheOptions {
  /** How long an entry may be used (ms); 0 turns the cache off. */
  maxAgeMs?: number;
  now?: () => number;
}

/** After a claim planned from the cache (or any read) lost its race, the stream is read, not cached, for this long. */
export const CONTENDED_MS = 10_000;
/** Entries kept at most (the oldest go first): a container serves few groups × partitions at a time. */
export const CURSOR_CACHE_MAX_ENTRIES = 1024;

interface Entry {
  state: CursorState;
  /** When the read or write that saw `state` was sent (ms). */
  at: number;
  /** The `createdAt` of the group the entry was stored for. */
  incarnation: number;
}

export class CursorCache {
  readonly maxAgeMs: number;
  readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  /** Streams where a claim lost its race recently: key → until (ms). */
  private readonly contended = new Map<string, number>();

  constructor(options: CursorCacheOptions = {}) {
    this.maxAgeMs = Math.max(0, options.maxAgeMs ?? 0);
    this.now = options.now ?? Date.now;
  }

  /** Whether the cache is on. */
  get enabled(): boolean {
    return this.maxAgeMs > 0;
  }

  /**
   * Whether cursors of `stream` are cached at all: partition streams (`t:<topic>/p:<n>`, the redrive
   * stream `r:<group>/p:0`) and FIFO shard streams (`t:<topic>/k:<key>`, `o:<orderGroup>/k:<key>`, sequenced `t:<topic>/q:<key>`).
   */
  static caches(stream: string): boolean {
    return /^[tr]:[^/]+\/p:\d+$/.test(stream) || /^[to]:[^/]+\/[kq]:/.test(stream);
  }

  /** The cursor of (group, stream) as this container last saw it, when fresh and of the same group incarnation. */
  get(group: string, stream: string, incarnation: number): CursorState | undefined {
    if (!this.enabled) return undefined;
    const k = key(group, stream);
    const entry = this.entries.get(k);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.incarnation !== incarnation || now - entry.at > this.maxAgeMs || now < entry.at || this.isContended(k, now)) {
      this.entries.delete(k);
      return undefined;
    }
    return entry.state;
  }

  /** Remembers what a read or write sent at `at` saw, for the group incarnation `incarnation`; an older observation never replaces a newer one. */
  put(group: string, stream: string, state: CursorState, at: number, incarnation: number): void {
    if (!this.enabled || !CursorCache.caches(stream)) return;
    const k = key(group, stream);
    if (this.isContended(k, this.now())) return;
    const entry = this.entries.get(k);
    if (entry && entry.at > at) return;
    this.entries.delete(k);
    this.entries.set(k, { state, at, incarnation });
    // Insertion order is age order: the oldest go first.
    while (this.entries.size > CURSOR_CACHE_MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  /**
   * A write of this container (a commit, a visibility change) left the cursor as `state`, as the
   * write returned it: replaces the entry when it holds the same cursor item (same `ca`), else drops it.
   */
  update(group: string, stream: string, state: CursorState, at: number): void {
    const k = key(group, stream);
    const entry = this.entries.get(k);
    if (!entry) return;
    if (entry.state.createdAt === state.createdAt && entry.state.group === state.group) this.put(group, stream, state, at, entry.incarnation);
    else this.entries.delete(k);
  }

  /** A write of this container changed the cursor in a way not returned here (a transaction, a seek): drop the entry. */
  forget(group: string, stream: string): void {
    this.entries.delete(key(group, stream));
  }

  /** Drops every entry of a group (its cursors were removed). */
  forgetGroup(group: string): void {
    const prefix = `${group}\u0000`;
    for (const k of [...this.entries.keys()]) if (k.startsWith(prefix)) this.entries.delete(k);
  }

  /** A claim on (group, stream) lost its race: drop the entry and read that stream for {@link CONTENDED_MS}. */
  lost(group: string, stream: string): void {
    if (!this.enabled) return;
    const k = key(group, stream);
    this.entries.delete(k);
    this.contended.delete(k);
    this.contended.set(k, this.now() + CONTENDED_MS);
    while (this.contended.size > CURSOR_CACHE_MAX_ENTRIES) this.contended.delete(this.contended.keys().next().value as string);
  }

  /** Entries held (tests). */
  get size(): number {
    return this.entries.size;
  }

  private isContended(k: string, now: number): boolean {
    const until = this.contended.get(k);
    if (until === undefined) return false;
    if (until > now) return true;
    this.contended.delete(k);
    return false;
  }
}

const key = (group: string, stream: string): string => `${group}\u0000${stream}`;
