/**
 * Redrive: brings the messages a group dead-lettered back to that group only,
 * through its redrive stream (docs/design.md, Redrive).
 */
import { DEAD_LETTER_PROPERTIES, DeadLetterProperty } from '../domain/dead-letter.js';
import { GroupNotFoundError } from '../domain/errors.js';
import { type Group, type MessageRecord } from '../domain/model.js';
import { redriveStream, streamId } from '../domain/streams.js';
import { deadLetterLinkPk } from '../adapters/dynamodb/keys.js';
import { storedRecordMaxBytes } from '../adapters/dynamodb/records.js';
import type { RedriveLink } from '../adapters/dynamodb/redrives.js';
import { ItemConditionFailedError, WriteBatch } from '../adapters/dynamodb/write-batch.js';
import type { Clock } from '../ports/clock.js';
import type { Notifier } from '../ports/notifier.js';
import type { PushQueue } from '../ports/push-queue.js';
import { chunkAppends } from './append-chunks.js';
import { MessageQueries } from './message-queries.js';
import { missingCursorStart } from './missing-cursor-start.js';
import type { Stores } from './stores.js';

/**
 * Dead letters one page reads and one transaction writes at most: their link updates, the group
 * item, the segment and perhaps the stream's sentinel stay below DynamoDB's 100 items.
 */
export const REDRIVE_PAGE = 90;
/** Most messages one request redrives (maxMessages' bound). */
export const REDRIVE_REQUEST_MAX = 1000;
/** A request starts no new page after this long; the answer then says `more`. */
const REQUEST_BUDGET_MS = 10_000;
/** Attempts of one chunk whose links changed meanwhile (a concurrent redrive took some). */
const CHUNK_ATTEMPTS = 4;
/**
 * Bound of a link item as updated: its keys (a topic name and a message id, a group name), the
 * dead-letter topic's name, the copy's id, three numbers and attribute names stay far below it.
 */
const LINK_ITEM_BYTES = 2_000;
/** Pages in a row that found only links redriven meanwhile (the index lags a moment): then the request ends. */
const EMPTY_PAGES_MAX = 5;
const EMPTY_PAGE_PAUSE_MS = 100;
const GROUP_ITEM = 'group';
const linkItem = (i: number) => `link:${i}`;

export interface RedriveResult {
  redriven: number;
  /** Dead letters remain that this request did not reach (ask again). */
  more: boolean;
}

interface Candidate {
  link: RedriveLink;
  record: MessageRecord;
}

export class Redriver {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
    private readonly notifier: Notifier,
    /** Push groups: their redriven messages get a job of their own (docs/design.md, Redrive). */
    private readonly pushQueue?: PushQueue,
    /** How long another container's cached group item may lack the redrive hint (`rd`). */
    private readonly catalogCacheMs = 5000,
  ) {}

  /**
   * Redrives up to `maxMessages` (default: as many as the request reaches, at most
   * {@link REDRIVE_REQUEST_MAX}) of the messages `groupName` dead-lettered, oldest dead letter
   * first, page by page; each page is appended to the group's redrive stream in transactions that
   * also mark its links redriven (conditional: a dead letter never comes back twice).
   */
  async redrive(groupName: string, maxMessages: number | undefined): Promise<RedriveResult> {
    const group = await this.stores.catalog.getGroup(groupName);
    if (!group) throw new GroupNotFoundError(groupName);
    const started = this.clock.now();
    const want = Math.min(maxMessages ?? REDRIVE_REQUEST_MAX, REDRIVE_REQUEST_MAX);
    const stream = redriveStream(group.name);
    let cursorReady = false;
    let redriven = 0;
    let empty = 0;
    try {
      while (redriven < want) {
        if (this.clock.now() - started >= REQUEST_BUDGET_MS) return { redriven, more: true };
        const keys = await this.stores.redrives.pendingKeys(group.name, group.createdAt, Math.min(REDRIVE_PAGE, want - redriven));
        if (keys.length === 0) return { redriven, more: false };
        const candidates = await this.candidates(group, await this.stores.redrives.pendingLinks(group.name, keys));
        if (candidates.length === 0) {
          // Every link of the page was redriven (or dropped) meanwhile and gsi1 has not caught up yet.
          if (++empty >= EMPTY_PAGES_MAX) return { redriven, more: true };
          await new Promise((resolve) => setTimeout(resolve, EMPTY_PAGE_PAUSE_MS));
          continue;
        }
        empty = 0;
        if (!cursorReady) {
          // The cursor exists before anything is appended, so it starts below the first redriven message.
          await this.stores.cursors.createIfAbsent(group.name, stream, await missingCursorStart(this.stores.log, stream, []), this.clock.now());
          cursorReady = true;
        }
        await this.stores.redrives.raiseHint(group.name, Math.max(...candidates.map((c) => c.record.expiresAt)));
        redriven += await this.appendPage(group, stream, candidates);
      }
      const more = (await this.stores.redrives.pendingKeys(group.name, group.createdAt, 1)).length > 0;
      return { redriven, more };
    } finally {
      // This container's receives see the new hint at once (others within the catalog cache lifetime).
      if (cursorReady) await this.stores.catalog.getGroup(group.name);
      // A push group is drained on a push job. The dispatcher's job for the redrive stream's segment
      // (only for topics still naming the group in `pg`: none for a topic it left or deleted) may reach
      // a worker whose cached group item has no `rd` yet, whose claim then skips the redrive stream:
      // a job now, and one once every container's cached group item shows the hint.
      // (The redrive itself took effect: a failed send must not turn it into an error.)
      if (cursorReady && redriven > 0 && group.push && this.pushQueue) {
        await this.pushQueue.send([{ group: group.name, stream }]).catch(() => undefined);
        await this.pushQueue.send([{ group: group.name, stream }], this.catalogCacheMs + 1000).catch(() => undefined);
      }
    }
  }

  /**
   * The redriven messages of a page of links: each copy read back (one BatchGetItem per page; a
   * copy is a segment of its own), made the original again — same id and topic, the copy's
   * properties removed, deliverable now, living as long as the copy would. A link whose copy is
   * gone (expired, or its dead-letter topic deleted or re-created) leaves the redrive index.
   */
  private async candidates(group: Group, links: RedriveLink[]): Promise<Candidate[]> {
    const now = this.clock.now();
    const dlqTopics = await this.stores.catalog.getTopics([...new Set(links.map((l) => l.copyTopic))]);
    const ids = await this.stores.ids.codec();
    const addressed = links.map((link) => {
      const address = ids.openMessageId(link.copyTopic, link.copyMessageId);
      const topic = dlqTopics.get(link.copyTopic);
      // A copy of an older generation of the dead-letter topic is gone with it.
      if (!address || !topic || address.generation !== topic.generation || address.local.kind !== 'partition') return { link, stream: undefined, seq: 0 };
      return { link, stream: streamId(topic, address.local), seq: address.seq, generation: topic.generation };
    });
    const segments = await this.stores.log.getSegments(addressed.flatMap((a) => (a.stream ? [{ stream: a.stream, seq: a.seq }] : [])));
    // The originals' topics, read once for the page (their properties are read from the originals).
    const sourceNames = segments.flatMap((s) => s.records.map((r) => r.properties[DeadLetterProperty.sourceTopic]).filter((t): t is string => t !== undefined));
    const sourceTopics = await this.stores.catalog.getTopics([...new Set(sourceNames)].filter((t) => !dlqTopics.has(t)));
    const originals = new MessageQueries(this.stores, this.clock);
    const out: Candidate[] = [];
    for (const a of addressed) {
      const copy = segments.find((s) => s.stream === a.stream && s.seq === a.seq)?.records[0];
      const sourceTopic = copy?.properties[DeadLetterProperty.sourceTopic];
      const sourceId = copy?.properties[DeadLetterProperty.sourceMessageId];
      const usable =
        copy !== undefined &&
        copy.messageId === a.link.copyMessageId &&
        copy.generation === a.generation &&
        copy.expiresAt > now &&
        sourceTopic !== undefined &&
        sourceId !== undefined &&
        // The copy is the one this link names: same original, same group.
        deadLetterLinkPk(sourceTopic, sourceId) === a.link.key.pk &&
        copy.properties[DeadLetterProperty.group] === group.name;
      if (!usable) {
        await this.stores.redrives.drop(group.name, a.link);
        continue;
      }
      // The original's own properties while it is retained: the copy's `sluice-dead-letter-*` values
      // replaced any it had (a copy read from a dead-letter topic and dead-lettered again). Once it is
      // gone, the copy's without the ones the dead letter added.
      const sourceTopicItem = dlqTopics.get(sourceTopic) ?? sourceTopics.get(sourceTopic);
      const original = sourceTopicItem ? await originals.findRecord(sourceTopicItem, sourceId) : undefined;
      const properties =
        original?.record.messageId === sourceId
          ? original.record.properties
          : Object.fromEntries(Object.entries(copy.properties).filter(([k]) => !DEAD_LETTER_PROPERTIES.includes(k)));
      out.push({
        link: a.link,
        record: { ...copy, messageId: sourceId, topic: sourceTopic, properties, deliverableAt: now },
      });
    }
    return out;
  }

  /** Appends a page in transactions within DynamoDB's limits; returns how many came back. */
  private async appendPage(group: Group, stream: string, candidates: Candidate[]): Promise<number> {
    const chunks = chunkAppends(
      candidates.map((c) => ({
        item: c,
        stream,
        notice: undefined,
        recordBytes: storedRecordMaxBytes(c.record),
        companionBytes: LINK_ITEM_BYTES,
      })),
    );
    let redriven = 0;
    for (const chunk of chunks) redriven += await this.appendChunk(group, stream, chunk.map((a) => a.item));
    for (const topic of new Set(candidates.map((c) => c.record.topic))) this.notifier.notify(topic);
    return redriven;
  }

  private async appendChunk(group: Group, stream: string, chunk: Candidate[]): Promise<number> {
    let live = chunk;
    for (let attempt = 0; attempt < CHUNK_ATTEMPTS && live.length > 0; attempt++) {
      const now = this.clock.now();
      const planned = live;
      try {
        await this.stores.log.append(stream, (first) => {
          const extras = new WriteBatch().add(GROUP_ITEM, this.stores.redrives.countItem(group.name, planned.length));
          planned.forEach((c, i) => extras.add(linkItem(i), this.stores.redrives.redrivenItem(group.name, c.link, first + i, now)));
          return { records: planned.map((c) => c.record), extras };
        });
        return planned.length;
      } catch (error) {
        if (!(error instanceof ItemConditionFailedError)) throw error;
        if (error.item === GROUP_ITEM) throw new GroupNotFoundError(group.name);
        // A concurrent redrive took some of these links: keep those that still wait, try again.
        const still = await this.stores.redrives.pendingLinks(group.name, planned.map((c) => c.link.key));
        const waiting = new Set(still.map((l) => `${l.key.pk}\u0000${l.key.sk}\u0000${l.copyMessageId}`));
        live = planned.filter((c) => waiting.has(`${c.link.key.pk}\u0000${c.link.key.sk}\u0000${c.link.copyMessageId}`));
      }
    }
    return 0;
  }
}
