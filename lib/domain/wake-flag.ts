/**
 * Whether a segment appended to a topic must carry the `w` flag, i.e. reach
 * the dispatcher's `wake` routes (docs/design.md, "The dispatcher"; design
 * §7.2): someone is waiting to hear of the topic's new messages.
 */

/** What the appender knows about a topic's waiters (the topic item's `pu` and `wu`). */
export interface TopicWaiters {
  /** `pu`: how many push subscriptions the topic has (push groups subscribed to it). */
  pushSubscriptions?: number | undefined;
  /** `wu` (ms): a parked pull consumer waits for the topic until then. */
  parkedUntil?: number | undefined;
}

/**
 * True when a push group is subscribed to the topic, or a pull consumer has
 * parked on it until after `now` (ms). A busy pull consumer never parks, so
 * a topic that is only read by busy consumers never sets the flag and its
 * messages never invoke the dispatcher.
 */
export function segmentWantsWake(topic: TopicWaiters, now: number): boolean {
  return (topic.pushSubscriptions ?? 0) > 0 || (topic.parkedUntil ?? 0) > now;
}
