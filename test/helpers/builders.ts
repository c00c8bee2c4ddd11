/**
 * Settings for the services' put calls, as a test writes them: only what the test is about.
 * Every other field is `undefined`, which the services read as "the default" (as they read a
 * field the API request left out).
 */
import type { Subscription } from '../../lib/domain/model.js';
import type { GroupInput, TopicInput } from '../../lib/services/admin-service.js';
import type { ProducerInput } from '../../lib/services/transaction-service.js';

/** A topic: standard unless `settings.type` says otherwise. `h.admin.putTopic('orders', topic())` */
export const topic = (settings: Partial<TopicInput> = {}): TopicInput => ({
  type: 'standard',
  retentionSeconds: undefined,
  maxDelaySeconds: undefined,
  orderGroup: undefined,
  ...settings,
});

/**
 * A consumer group subscribed to `topics` (a name: every tag; a subscription: its tags).
 * `h.admin.putGroup('billing', group('orders', { visibilityTimeoutSeconds: 30 }))`
 */
export const group = (topics: string | Array<string | Subscription>, settings: Partial<Omit<GroupInput, 'subscriptions'>> = {}): GroupInput => ({
  subscriptions: [topics].flat().map((t) => (typeof t === 'string' ? { topic: t, tags: undefined } : t)),
  deliveryMode: undefined,
  visibilityTimeoutSeconds: undefined,
  maxDeliveries: undefined,
  deadLetterTopic: undefined,
  ...settings,
});

/** A producer group whose checker is at `checkerUrl`. `h.transactions.putProducer('shop', producer(checker.url))` */
export const producer = (checkerUrl: string, settings: Partial<Omit<ProducerInput, 'checkerUrl'>> = {}): ProducerInput => ({
  checkerUrl,
  checkIntervalSeconds: undefined,
  maxChecks: undefined,
  onMaxChecks: undefined,
  ...settings,
});
