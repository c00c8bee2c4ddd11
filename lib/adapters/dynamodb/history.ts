/**
 * History items: completions a cursor spilled from `dn` so that repeated
 * commits and message queries know them for the message's whole retention
 * (docs/design.md, "History for the whole retention"; what to spill:
 * lib/domain/history.ts).
 *
 *   chunk      pk `H#<group>#<stream>`, sk `<13-digit cursor ca>#<16-digit first seq>` (keys.ts)
 *     hi   last sequence number the chunk covers: it holds every completion of [first, hi]
 *          the cursor knew when the chunk was planned (the others were still leased)
 *     a    base time (ms) of the packed completion times
 *     h    packed completions (history-packing.ts)
 *     ttl  removal (epoch s): after the longest retention
 *   straggler  pk the same, sk `<13-digit cursor ca>#s<16-digit seq>`
 *     d    the completion as `dn` stores it (one number, cursor-item.ts); ttl as above
 *   straggler run  pk the same, sk `<13-digit cursor ca>#r<16-digit first seq>.<seek epoch>`
 *     d    a whole range's completions as `dn` stores them (`[number, epoch, n]`, cursor-item.ts
 *          `runKey`): one item for its n members, as in `dn` (a spill across ranges still leased
 *          made every member a straggler: 10 items a range, and the history key bound the shard)
 *
 * Chunks are written with `attribute_not_exists` BEFORE the claim that moves
 * the cursor's mark past them removes their entries from `dn`: a claim that
 * then loses its race leaves a chunk nobody's mark covers yet, and the next
 * spill at that mark adopts it instead of writing another. Stragglers are
 * facts that never change: a plain Put.
 */
import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RANGE_MAX_MESSAGES, type DoneEntry } from '../../domain/cursor.js';
import { markAfter, type Spill } from '../../domain/history.js';
import { call, conditional } from './call.js';
import { doneOfStored, later, storedDone, storedRun } from './cursor-item.js';
import { historyChunkSk, historyPk, historyRunStragglerBounds, historyRunStragglerSk, historyRunStragglerStart, historyStragglerSk } from './keys.js';
import { packHistory, unpackHistory } from './history-packing.js';

/** What a claim applies to the cursor after its spill was written: the mark it moves from and to, and the `dn` entries it removes. */
export interface SpillWritten {
  expectMark: number | undefined;
  mark: number;
  remove: number[];
}

/** Whether a chunk's completion is the cursor's (as stored: time, deliveries, outcome, seek epoch). */
const sameCompletion = (chunked: DoneEntry, held: DoneEntry | undefined): boolean =>
  held !== undefined && JSON.stringify(storedDone(chunked)) === JSON.stringify(storedDone(held));

export class HistoryStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Writes a spill planned from a cursor snapshot (created at `createdAt`,
   * holding `known` in `dn`): its chunk — or, when a chunk at that mark exists
   * already, adopts that one — and its stragglers. Returns what the claim must
   * apply, conditional on the mark the plan read.
   */
  async write(group: string, stream: string, createdAt: number, known: ReadonlyMap<number, DoneEntry>, spill: Spill, ttlSeconds: number): Promise<SpillWritten> {
    const pk = historyPk(group, stream);
    const stragglers = stragglerItems(createdAt, spill.stragglers).map(({ sk, d }) =>
      call(() => this.doc.send(new PutCommand({ TableName: this.table, Item: { pk, sk, d, ttl: ttlSeconds } }))),
    );
    const [chunk] = await Promise.all([this.writeChunk(group, stream, createdAt, known, spill, ttlSeconds), ...stragglers]);
    return { expectMark: spill.expectMark, mark: chunk.mark, remove: [...chunk.remove, ...spill.stragglers.map((e) => e.seq)] };
  }

  private async writeChunk(group: string, stream: string, createdAt: number, known: ReadonlyMap<number, DoneEntry>, spill: Spill, ttlSeconds: number) {
    const { chunk } = spill;
    if (!chunk) return { mark: markAfter(spill), remove: [] as number[] };
    const base = chunk.entries[0]?.at ?? 0;
    const item = {
      pk: historyPk(group, stream),
      sk: historyChunkSk(createdAt, chunk.first),
      hi: chunk.last,
      a: base,
      h: packHistory(chunk.first, base, chunk.entries),
      ttl: ttlSeconds,
    };
    const put = await conditional(() => this.doc.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })));
    if (put) return { mark: chunk.last, remove: chunk.entries.map((e) => e.seq) };
    // A spill at this mark was written before and its claim lost (or a racer's claim won): that
    // chunk stands. Its range may differ from this plan's; the completions of its range that it
    // does not hold were leased when it was planned and are stragglers now. Only completions it
    // holds as the cursor does leave `dn`: one whose cursor write lost to a seek left a chunk of the
    // earlier epoch's completions, and a replay's completions of the same numbers stay (stragglers).
    const existing = await this.chunkAt(group, stream, createdAt, chunk.first);
    if (!existing) return { mark: spill.expectMark ?? 0, remove: [] as number[] };
    return { mark: existing.last, remove: existing.entries.filter((e) => sameCompletion(e, known.get(e.seq))).map((e) => e.seq) };
  }

  /**
   * The completion of `seq` as history holds it, for a sequence number at or below the cursor's
   * mark that the cursor no longer holds: the chunk whose range holds it (one Query), its straggler
   * item (one GetItem) and the straggler runs that may hold it (one Query of at most a few items:
   * runs start at most RANGE_MAX_MESSAGES − 1 below it), read at once. Of what they hold for it the
   * later counts, as in `dn`: a replay after a seek completes a number again, and a run may be
   * spilled as a straggler with members the chunk holds too (those at or below the mark it was cut
   * at are stragglers; a later completion of a member above it is in the chunk).
   */
  async find(group: string, stream: string, createdAt: number, seq: number): Promise<DoneEntry | undefined> {
    const pk = historyPk(group, stream);
    const runs = historyRunStragglerBounds(createdAt, seq - RANGE_MAX_MESSAGES + 1, seq);
    const [chunks, single, runItems] = await Promise.all([
      call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
            ExpressionAttributeValues: { ':pk': pk, ':lo': historyChunkSk(createdAt, 0), ':hi': historyChunkSk(createdAt, seq) },
            ScanIndexForward: false,
            Limit: 1,
            ConsistentRead: true,
          }),
        ),
      ),
      call(() => this.doc.send(new GetCommand({ TableName: this.table, Key: { pk, sk: historyStragglerSk(createdAt, seq) }, ConsistentRead: true }))),
      call(() =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
            ExpressionAttributeValues: { ':pk': pk, ':lo': runs.lo, ':hi': runs.hi },
            ConsistentRead: true,
          }),
        ),
      ),
    ]);
    const item = chunks.Items?.[0];
    const found: DoneEntry[] = item && Number(item.hi) >= seq ? this.unpack(item).entries.filter((e) => e.seq === seq) : [];
    if (single.Item) found.push(doneOfStored(seq, single.Item.d as number));
    for (const run of runItems.Items ?? []) {
      const d = run.d as [number, number, number];
      const start = historyRunStragglerStart(String(run.sk));
      if (start <= seq && seq < start + Number(d[2])) found.push({ ...doneOfStored(seq, d), run: { start, n: Number(d[2]) } });
    }
    return found.reduce<DoneEntry | undefined>((latest, entry) => (latest === undefined || later(entry, latest) ? entry : latest), undefined);
  }

  private async chunkAt(group: string, stream: string, createdAt: number, first: number) {
    const { Item } = await call(() =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: historyPk(group, stream), sk: historyChunkSk(createdAt, first) }, ConsistentRead: true })),
    );
    return Item ? this.unpack(Item) : undefined;
  }

  private unpack(item: Record<string, unknown>): { last: number; entries: DoneEntry[] } {
    const first = Number(String(item.sk).slice(String(item.sk).indexOf('#') + 1));
    return { last: Number(item.hi), entries: unpackHistory(first, Number(item.a), item.h as Uint8Array) };
  }
}

/**
 * The items of a spill's stragglers: a completion of its own as one item, and the members of a run
 * (a whole range's completions, one entry of `dn`) as one item of the run, as `dn` stores it.
 */
export function stragglerItems(createdAt: number, stragglers: readonly DoneEntry[]): Array<{ sk: string; d: unknown }> {
  const items = new Map<string, unknown>();
  for (const entry of stragglers) {
    if (entry.run === undefined) items.set(historyStragglerSk(createdAt, entry.seq), storedDone(entry));
    else items.set(historyRunStragglerSk(createdAt, entry.run.start, entry.epoch ?? 0), storedRun(entry, entry.run.n));
  }
  return [...items].map(([sk, d]) => ({ sk, d }));
}
