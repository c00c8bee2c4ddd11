/**
 * Message look-ups (docs/design.md, Message ids, query, retention): by id —
 * a direct id is its own sealed address, one segment read — or by key through the
 * key index, with the message's state in every subscribed group read from
 * that group's cursor.
 */
import { MessageNotFoundError } from '../domain/errors.js';
import { AnswerBudget, jsonBytes } from '../domain/answer-budget.js';
import { GroupDeliveryState, Limits, iso, isPurged, messageContent, type MessageRecord, type MessageState, type Topic } from '../domain/model.js';
import { isDeferredMessageId, redriveStream, streamId, ulidOfDeferredMessageId } from '../domain/streams.js';
import { tagMatches, type CursorState, type DoneEntry } from '../domain/cursor.js';
import type { Clock } from '../ports/clock.js';
import { requireTopic } from './lookups.js';
import type { Stores } from './stores.js';

interface Found {
  record: MessageRecord;
  stream: string | undefined;
  seq: number | undefined;
  state: MessageState;
}

export class MessageQueries {
  constructor(
    private readonly stores: Stores,
    private readonly clock: Clock,
  ) {}

  async getMessage(topicName: string, messageId: string) {
    const topic = await requireTopic(this.stores, topicName);
    const found = await this.findRecord(topic, messageId);
    if (!found) throw new MessageNotFoundError(`Message '${messageId}' was not found in topic '${topic.name}' (it may have expired).`);
    const { record, stream, seq } = found;
    if (stream === undefined || seq === undefined) return { ...this.describe(topic, found), groups: [] };
    const groups = (await this.stores.catalog.allGroups()).filter((g) => g.subscriptions.some((s) => s.topic === topic.name));
    const links = await this.stores.markers.deadLetterLinks(topic.name, record.messageId);
    const deliveries = await Promise.all(
      groups.map(async (group) => {
        const cursor = await this.stores.cursors.get(group.name, stream, this.clock.now());
        const subscription = group.subscriptions.find((s) => s.topic === topic.name);
        // An `earliest` subscription started below the messages sent before the group existed.
        // A subscription added later (PATCH/PUT) started at the stream's head then: what entered before it was never this group's.
        const beforeSubscription = subscription?.startFrom !== 'earliest' && (record.sentAt < group.createdAt || (subscription?.since !== undefined && record.deliverableAt < subscription.since));
        const matches = tagMatches(subscription?.tags, record.tag);
        // Completions the cursor spilled are read from its history (for the message's whole retention).
        const done = cursor && matches && !cursor.leases.has(seq) ? await this.stores.cursors.completionOf(cursor, seq) : undefined;
        const state = groupState(cursor, done, seq, matches, beforeSubscription);
        const link = links.get(group.name);
        if (!link) return { group: group.name, ...state, deadLetter: null };
        // The link outlives the cursor's memory of completions (`dn`): it tells the outcome for the whole retention.
        const lease = cursor?.leases.get(seq);
        if (lease) return { group: group.name, ...state, deadLetter: null };
        const deadLetter = { topic: link.topic, messageId: link.messageId };
        if (link.redrivenSeq !== undefined) {
          // Redriven: its state in this group is its state in the group's redrive stream (the copy stays).
          const redriven = await this.stores.cursors.get(group.name, redriveStream(group.name), this.clock.now());
          const seqThere = link.redrivenSeq;
          const doneThere = redriven && !redriven.leases.has(seqThere) ? await this.stores.cursors.completionOf(redriven, seqThere) : undefined;
          return { group: group.name, ...groupState(redriven, doneThere, seqThere, true, false), deadLetter };
        }
        return { group: group.name, ...state, state: GroupDeliveryState.deadLettered, committedAt: null, deadLetter };
      }),
    );
    return { ...this.describe(topic, found), groups: deliveries };
  }

  /**
   * A page of the messages carrying `key`, newest first, within the answer
   * budget: a message that would pass `Limits.answerMaxBytes` ends the page
   * early, and `nextToken` resumes at it. (The first message of a page always
   * fits: one message's JSON is far below the budget.)
   */
  async messagesByKey(topicName: string, key: string, limit: number, nextToken: string | undefined) {
    const topic = await requireTopic(this.stores, topicName);
    const page = await this.stores.markers.byKey(topic.name, key, limit, nextToken);
    const budget = new AnswerBudget(Limits.answerMaxBytes, jsonBytes({ messages: [], nextToken: page.after[0] ?? '' }));
    const messages = [];
    for (const [i, messageId] of page.messageIds.entries()) {
      const found = await this.findRecord(topic, messageId);
      if (!found) continue;
      const message = this.describe(topic, found);
      if (!budget.take(jsonBytes(message) + 1) && messages.length > 0) return { messages, nextToken: page.after[i - 1] };
      messages.push(message);
    }
    return { messages, nextToken: page.nextToken };
  }

  /** A message that exists in `topic` (stored and not expired), wherever it is now. */
  async findRecord(topic: Topic, messageId: string): Promise<Found | undefined> {
    if (isDeferredMessageId(messageId)) {
      const deferred = await this.stores.deferred.get(ulidOfDeferredMessageId(messageId));
      if (!deferred || deferred.topic !== topic.name || deferred.record.generation !== topic.generation) return undefined;
      if ((deferred.state === 'released' || deferred.state === 'committed') && deferred.address) {
        const segment = await this.stores.log.segmentContaining(deferred.address.stream, deferred.address.seq);
        const record = segment?.records[deferred.address.seq - segment.seq];
        if (!record || record.messageId !== messageId || record.expiresAt <= this.clock.now() || isPurged(topic, record)) return undefined;
        return { record, stream: deferred.address.stream, seq: deferred.address.seq, state: 'deliverable' };
      }
      // Releasing (committing): its release (commit) is under way, or a crash left it to a sweep; it is not deliverable before it is marked.
      // Expired: such a claim closed past its records' expiry (appended once and expired, or never).
      const waiting =
        deferred.state === 'committing' ? 'prepared' : deferred.state === 'released' || deferred.state === 'committed' || deferred.state === 'releasing' ? 'scheduled' : deferred.state;
      // A purge cancels a scheduled message sent before it when it falls due.
      if (waiting === 'scheduled' && deferred.state === 'scheduled' && topic.purgedAt !== undefined && deferred.record.sentAt <= topic.purgedAt) {
        return { record: deferred.record, stream: undefined, seq: undefined, state: 'cancelled' };
      }
      return { record: deferred.record, stream: undefined, seq: undefined, state: waiting };
    }
    // A direct id is a sealed address: one that this deployment did not issue for this topic, or
    // for an earlier generation of it, names nothing (no read).
    const address = (await this.stores.ids.codec()).openMessageId(topic.name, messageId);
    if (!address || address.generation !== topic.generation) return undefined;
    if ((topic.type === 'fifo') !== (address.local.kind === 'shard')) return undefined;
    if (address.local.kind === 'partition' && address.local.partition >= topic.partitions) return undefined;
    const stream = streamId(topic, address.local);
    const segment = await this.stores.log.segmentContaining(stream, address.seq);
    const record = segment?.records[address.seq - segment.seq];
    const now = this.clock.now();
    if (!record || record.messageId !== messageId || record.topic !== topic.name) return undefined;
    if (record.generation !== topic.generation || record.expiresAt <= now || isPurged(topic, record)) return undefined;
    return { record, stream, seq: address.seq, state: 'deliverable' };
  }

  private describe(topic: Topic, { record, seq, state }: Found) {
    return {
      messageId: record.messageId,
      topic: record.topic,
      state,
      ...messageContent(record),
      sequence: topic.type === 'fifo' && seq !== undefined ? seq : null,
      sentAt: iso(record.sentAt),
      deliverableAt: iso(record.deliverableAt),
      ...(state === 'scheduled' || state === 'cancelled' ? { deliverAt: iso(record.deliverableAt) } : {}),
      expiresAt: iso(record.expiresAt),
    };
  }
}

/** A message's state in one group, from that group's cursor on its stream. */
function groupState(cursor: CursorState | undefined, done: DoneEntry | undefined, seq: number, matches: boolean, beforeSubscription: boolean) {
  const none = { deliveryCount: 0, committedAt: null as string | null };
  if (!matches) return { state: GroupDeliveryState.filtered, ...none };
  const lease = cursor?.leases.get(seq);
  if (lease) {
    return { state: lease.pending ? GroupDeliveryState.pending : GroupDeliveryState.inFlight, deliveryCount: lease.deliveries, committedAt: null };
  }
  if (done) {
    return {
      state: done.outcome === 'committed' ? GroupDeliveryState.committed : done.outcome === 'dead-lettered' ? GroupDeliveryState.deadLettered : GroupDeliveryState.expired,
      deliveryCount: done.deliveries,
      committedAt: done.outcome === 'committed' ? iso(done.at) : null,
    };
  }
  if (!cursor || seq >= cursor.next) return { state: GroupDeliveryState.waiting, ...none };
  // Below `nx`, neither leased nor in the cursor's history: completed before the history began
  // (cursors of earlier versions forgot completions), so committed or dead-lettered, time unknown.
  if (beforeSubscription) return { state: GroupDeliveryState.filtered, ...none };
  return { state: GroupDeliveryState.committed, deliveryCount: null, committedAt: null };
}
