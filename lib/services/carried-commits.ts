/**
 * Commits a receive carries (`commit` in its body) on their way to being
 * written: folded into the claim of their stream when the receive claims from
 * it, otherwise (or when the fold cannot take them) committed on their own,
 * with classification, as a plain commit (docs/design.md, Carried commits).
 */
import type { Receipt } from '../domain/message-ids.js';
import type { CommitResult } from './committer.js';

/** One carried handle: where it was in the request and the lease it names. */
export interface CarriedCommit {
  index: number;
  handle: string;
  seq: number;
  token: string;
}

/** Writes carried commits the plain way (the committer), answering each in request order. */
export type SeparateCommit = (handles: string[]) => Promise<CommitResult[]>;

export class CarriedCommits {
  private readonly open = new Map<string, CarriedCommit[]>();
  private readonly results: Array<CommitResult | undefined>;
  /** Request positions that repeat an earlier carried commit (same stream, sequence and lease), by the first's. */
  private readonly repeats = new Map<number, number[]>();
  private readonly handles: string[];

  constructor(
    receipts: Array<{ handle: string; receipt: Receipt }>,
    private readonly separately: SeparateCommit,
  ) {
    this.results = receipts.map(() => undefined);
    this.handles = receipts.map((r) => r.handle);
    const first = new Map<string, number>();
    receipts.forEach(({ handle, receipt }, index) => {
      // A handle listed twice is one commit (written once: two writes of one lease in one update
      // would overlap), and every copy gets its answer.
      const key = `${receipt.stream}\u0000${receipt.seq}\u0000${receipt.token}`;
      const earlier = first.get(key);
      if (earlier !== undefined) {
        this.repeats.set(earlier, [...(this.repeats.get(earlier) ?? []), index]);
        return;
      }
      first.set(key, index);
      const entry = { index, handle, seq: receipt.seq, token: receipt.token };
      this.open.set(receipt.stream, [...(this.open.get(receipt.stream) ?? []), entry]);
    });
  }

  /** Streams with carried commits not yet written. */
  streams(): string[] {
    return [...this.open.keys()];
  }

  /** The carried commits of `stream` not yet written. */
  of(stream: string): CarriedCommit[] {
    return this.open.get(stream) ?? [];
  }

  /** These commits took effect inside their stream's claim. */
  folded(stream: string, entries: CarriedCommit[]): void {
    for (const entry of entries) this.answer(entry, { receiptHandle: entry.handle, status: 'committed' });
    this.forget(stream, entries);
  }

  /** Commits these on their own (a repeat, a stale handle or no room in the claim: classification decides). */
  async separate(stream: string, entries: CarriedCommit[]): Promise<void> {
    this.forget(stream, entries);
    await this.write(entries);
  }

  /** Commits on their own, in one plain commit, every carried commit of the streams `keep` does not choose. */
  async separateAll(keep: (stream: string) => boolean = () => false): Promise<void> {
    const entries = this.streams()
      .filter((stream) => !keep(stream))
      .flatMap((stream) => {
        const open = this.of(stream);
        this.forget(stream, open);
        return open;
      });
    await this.write(entries);
  }

  /** Every carried commit's result, in request order (after {@link separateAll}). */
  answers(): CommitResult[] {
    return this.results.map((result, index) => {
      if (result === undefined) throw new Error(`carried commit ${index} was never written`);
      return result;
    });
  }

  private async write(entries: CarriedCommit[]): Promise<void> {
    if (entries.length === 0) return;
    const results = await this.separately(entries.map((e) => e.handle));
    entries.forEach((entry, i) => {
      const result = results[i];
      if (result !== undefined) this.answer(entry, result);
    });
  }

  private answer(entry: CarriedCommit, result: CommitResult): void {
    for (const index of [entry.index, ...(this.repeats.get(entry.index) ?? [])]) this.results[index] = { ...result, receiptHandle: this.handles[index] ?? entry.handle };
  }

  private forget(stream: string, entries: CarriedCommit[]): void {
    const gone = new Set(entries);
    const left = this.of(stream).filter((e) => !gone.has(e));
    if (left.length > 0) this.open.set(stream, left);
    else this.open.delete(stream);
  }
}
