/** The Markdown section of the scale rows: contention as producers grow, and the modelled AWS ceiling. */
import { PARTITION_RCU_PER_SECOND, PARTITION_WCU_PER_SECOND } from './capacity-model.js';
import type { ScaleRow } from './scale.js';
import type { ReceiveRow } from './scale-receive.js';

const f = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The injected round trip, and whether each client had a container of its own (absent in runs before: shared). */
export interface RunConfig {
  minMs: number;
  maxMs: number;
  clients?: 'own' | 'shared';
}

const clientsNote = (config: RunConfig, who: string) =>
  config.clients === 'own'
    ? `Each ${who} is served by a container of its own (its own caches, picker and contention memory, as concurrent Lambda invocations are; bench/client-containers.ts).`
    : `Every ${who} is served by the local runtime's one container (its caches, picker and contention memory shared, which AWS's containers do not).`;

export function scaleSection(rows: ScaleRow[], roundTrip: RunConfig): string[] {
  const out: string[] = [];
  const callMs = (roundTrip.minMs + roundTrip.maxMs) / 2;
  out.push('## Scale: lost races and the modelled AWS ceiling (issue 19)');
  out.push('');
  out.push(
    `Producers send back to back (no consumers) to one topic per type and batch size, with ${f(roundTrip.minMs)}–${f(roundTrip.maxMs)} ms added to every DynamoDB call ` +
      '(half before it is sent, half after the answer), so that appends race on a stream head as on AWS. *standard*: 4 partitions (*-p16*, *-p64*, *-p256*: 16, 64, 256); ' +
      '*fifo-many*: each message on a random one of many opened shard keys, 4 notice streams (the default); *fifo-many-p256*: the same with 256 notice streams (`partitions: 256`), over more shard keys for longer (profile `wideFifo`: the share of the busiest notice stream needs many messages per stream); *fifo-hot*: every message on one shard key; *fifo-hot-seq*: the same on a sequenced FIFO topic (`sequenced: true`: the shard stream `…/q:hot` takes its numbers from a counter on its sentinel, one update per segment write, no head read). ' +
      'Lost races are real `ConditionalCheckFailed` answers on a segment or sentinel put, per successful append (notice appends included; on a sequenced shard only segment puts that met a filler). ' +
      '*fillers*: filler puts that landed on sequenced shards (granted numbers never written, filled by the writer or a reader); *WCU / message*: every write unit of the row, failed conditional writes modelled. ' +
      clientsNote(roundTrip, 'producer'),
  );
  out.push('');
  out.push(
    `Per stream partition key k the row wrote, its bounds are ${f(PARTITION_WCU_PER_SECOND)} WCU/s ÷ (write units on k per message, failed attempts included), ` +
      `${f(PARTITION_RCU_PER_SECOND)} RCU/s ÷ (read units on k per message) and (1,000 ms ÷ (chain calls × ${f(callMs, 1)} ms)) ÷ (appends on k per message), ` +
      'where chain calls = 1 put + the share of attempts that read the head first (the appends to one key are a chain: each winner reads, then puts). ' +
      'A sequenced shard key (`/q:`) has no chain (a grant is one atomic update, not read-then-put): its bounds are the write units on it, its counter updates (sort key `#`, same partition key) included, and the read units (*write units on a sequenced shard*). ' +
      'Standard rows (a send that lost a race moves to another partition, so shares follow capacity): AWS ceiling = the sum over the keys the row used of each ' +
      'key\'s smallest bound at the share it would carry alone (*sum over partitions used*; the hottest-key figure is shown next to it). ' +
      'FIFO rows: the shard key chooses the shard stream, the sender the notice stream (a send\'s notices go to the one its container picked, moved after a lost race, ' +
      'as partitions): AWS ceiling = the smaller of the smallest bound over the shard keys and the sum over the notice streams used (*hottest shard, notices summed*). ' +
      `The AWS call time is assumed equal to the injected mean (${f(callMs, 1)} ms). *local msg/s* is what this machine did, not an AWS figure.`,
  );
  out.push('');
  const head = ['row', 'producers', 'lost races / append', 'requests / message', 'WCU / message', 'AWS ceiling msg/s', 'model', 'limited by', 'on key', 'keys used', 'hottest key alone msg/s', 'messages', 'fillers', 'local msg/s', '429', 'ms / call'];
  out.push(`| ${head.join(' | ')} |`);
  out.push(`|---|${head.slice(1).map((h) => (h === 'limited by' || h === 'on key' || h === 'model' ? '---' : '---:')).join('|')}|`);
  for (const r of rows) {
    out.push(
      `| ${r.id} | ${r.producers} | ${f(r.lostRacesPerAppend, 2)} | ${f(r.requestsPerMessage, 2)} | ${r.wcuPerMessage === undefined ? '' : f(r.wcuPerMessage, 2)} | ${f(r.awsCeilingMsgPerSecond)} | ${r.model ?? 'hottest key'} | ${r.limitedBy} | \`${r.hottestKey}\` | ` +
        `${r.keysUsed ?? ''} | ${r.hottestKeyCeilingMsgPerSecond === undefined ? '' : f(r.hottestKeyCeilingMsgPerSecond)} | ` +
        `${f(r.messages)} | ${r.fillers === undefined ? '' : f(r.fillers)} | ${f(r.localMsgPerSecond)} | ${f(r.throttled)} | ${f(r.msPerCall, 1)} |`,
    );
  }
  out.push('');
  const throttled = rows.filter((r) => r.throttledBy !== undefined);
  if (throttled.length > 0) {
    out.push('429s by their detail:');
    out.push('');
    for (const r of throttled) out.push(`- ${r.id}: ${Object.entries(r.throttledBy ?? {}).map(([detail, n]) => `${f(n)} × "${detail}"`).join('; ')}`);
    out.push('');
  }
  return out;
}

/** The Markdown section of the receive rows: lost claims and requests as consumers grow, and the modelled AWS ceiling. */
export function receiveSection(rows: ReceiveRow[], roundTrip: RunConfig): string[] {
  const out: string[] = [];
  const callMs = (roundTrip.minMs + roundTrip.maxMs) / 2;
  out.push('## Scale, the consumer side: lost claims and the modelled AWS ceiling (issue 19)');
  out.push('');
  out.push(
    `Consumers receive back to back (\`waitSeconds\` 0) from a backlog prefilled before each row (a row runs its seconds and on until it received the profile's floor of messages, within its most seconds: see *messages*), with ${f(roundTrip.minMs)}–${f(roundTrip.maxMs)} ms added to every DynamoDB call. ` +
      '*fifo-many-p256-steady*: the *fifo-many-p256* topic with no backlog: a paced producer (its own tag, not counted in the row) sends batches of 10 to random shard keys while the consumers receive, keeping about two rounds of every consumer\'s batch waiting; a consumer starts a receive only while more messages wait than the receives in flight ask for (*backlog*: what waited at the start, + what the producer sent during the row; *ran dry*: nothing received for 5 s). ' +
      '*call*: each receive\'s messages committed by one `/commit`; *carried*: by the consumer\'s next receive (the SDK Consumer\'s default). FIFO groups are `concurrent`. ' +
      'Every capacity unit the receives and commits touched is counted: a table partition key (`S#…`, `A#…`), a cursor item (`C#<group> @ <stream>`, updated in place: adaptive capacity isolates it), a GSI key (`gsi1 R#<group>`, the ready index). ' +
      clientsNote(roundTrip, 'consumer'),
  );
  out.push('');
  out.push(
    `Per unit u: ${f(PARTITION_WCU_PER_SECOND)} WCU/s ÷ (write units on u per message, failed conditional writes included), ${f(PARTITION_RCU_PER_SECOND)} RCU/s ÷ (read units on u per message), ` +
      `and on cursor items the claim chain (1,000 ms ÷ (chain calls × ${f(callMs, 1)} ms)) ÷ (claims on u per message), chain calls = 1 + min(1, reads of u ÷ claim attempts on u); *range claims* (a hot shard's grants by arithmetic, docs/design.md "Range claims") are no chain — each is one write that no other claim makes fail — and count in the units only. ` +
      '*fifo-hot* rows: AWS ceiling = the smallest over every unit (*hottest unit*: the shard key decides where messages are). ' +
      '*fifo-many* rows (many shard keys; the issue\'s workload has 10^6, mostly idle): the smallest of (i) the ready-index buckets `gsi1 R#<group>#<n>` summed — their units added up and the per-key limits multiplied by the buckets touched (a shard\'s bucket is a hash of its stream, so over many shards each bucket takes an even share) —, (ii) the notice streams summed as partitions (a stream\'s `S#` key and notice cursor together, at its share of the notice streams\' units: senders pick the stream) and (iii) every other shared unit at its own bound (the group\'s home key `gsi1 R#<group>`, …); each shard stream\'s own cursor and `S#` key are left out — the hottest of 1,000 keys in a few hundred messages is chance, and one hot shard is the *fifo-hot* rows\' case (*buckets and notice streams summed*; the hottest-unit figure next to it). ' +
      'Standard rows (consumers choose the partition): the sum over the partitions that took claims of each one\'s smallest bound at the share it would carry alone, or a shared unit\'s bound when smaller (*sum over partitions used*; the hottest-unit figure next to it). ' +
      '*shared units alone*: the smallest bound over the units every stream shares (notice cursors and streams, ready-index keys, activity), each at its own bound, leaving out each partition’s and shard’s own. ' +
      '*raises / message*: FIFO shard raises written on their own (a notice\'s shard that the receive reading it did not claim) per message received — a backlog\'s discovery when many; when consumers keep up, at most about one (most are absorbed into the claim of the receive that read the notice). ' +
      '*ran dry*: the backlog came within one round of receives of empty — the row is not valid. *local msg/s* is what this machine did, not an AWS figure. ' +
      '*catalog RCU/s a consumer*: read units on the catalog\'s topic and group items per consumer a second — each container\'s catalog cache reads them once per cache period (5 s), whatever the messages, so they are left out of every bound above (they are in RCU / msg): one item takes 3,000 RCU/s, i.e. 3,000 ÷ this many consumers.',
  );
  out.push('');
  const head = ['row', 'consumers', 'lost claims / message', 'lost claims / claim', 'requests / message', 'WCU / msg', 'RCU / msg', 'AWS ceiling msg/s', 'model', 'hottest unit alone msg/s', 'shared units alone msg/s', 'limited by', 'on unit', 'messages', 'claims', 'range claims', 'raises', 'raises / message', 'local msg/s', 'empty receives', 'backlog', 'ran dry', 'catalog RCU/s a consumer', 'ms / call'];
  out.push(`| ${head.join(' | ')} |`);
  out.push(`|---|${head.slice(1).map((h) => (h === 'limited by' || h === 'on unit' || h === 'ran dry' || h === 'model' ? '---' : '---:')).join('|')}|`);
  for (const r of rows) {
    out.push(
      `| ${r.id} | ${r.consumers} | ${f(r.lostClaimsPerMessage, 3)} | ${f(r.lostClaimsPerClaim, 3)} | ${f(r.requestsPerMessage, 2)} | ${f(r.wcuPerMessage, 2)} | ${f(r.rcuPerMessage, 2)} | ` +
        `${f(r.awsCeilingMsgPerSecond)} | ${r.model} | ${f(r.hottestUnitCeilingMsgPerSecond)} | ${r.sharedUnitsCeilingMsgPerSecond ? `${f(r.sharedUnitsCeilingMsgPerSecond)} (${r.sharedUnit})` : '–'} | ${r.limitedBy} | \`${r.hottestKey}\` | ${f(r.messages)} | ${f(r.claims)} | ${f(r.grants ?? 0)} | ${f(r.raises ?? 0)} | ${f(r.raisesPerMessage ?? 0, 2)} | ${f(r.localMsgPerSecond)} | ${f(r.emptyReceives)} of ${f(r.receives)} | ${f(r.backlogBefore)}${r.sent ? ` + ${f(r.sent)} sent` : ''} | ${r.ranDry ? '**yes**' : 'no'} | ${r.catalogRcuPerConsumerSecond === undefined ? '' : f(r.catalogRcuPerConsumerSecond, 2)} | ${f(r.msPerCall, 1)} |`,
    );
  }
  out.push('');
  return out;
}
