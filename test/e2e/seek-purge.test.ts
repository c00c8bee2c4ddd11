/**
 * startFrom, seek and purge over HTTP (issue 17 items 1, 2, 4): the SDK's `seek` and
 * `purgeTopic`, the CLI's `groups seek` and `topics purge --yes`, and bad input → precise 4xx.
 */
import { describe, expect, it } from 'vitest';
import { SluiceApiError } from '../../lib/client/index.js';
import { cliSession } from '../helpers/cli-session.js';

const cli = cliSession();
const { sluice, ok } = cli;
const refusal = async (call: Promise<unknown>) => {
  const error = await call.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(SluiceApiError);
  return error as SluiceApiError;
};
async function drain(group: string): Promise<string[]> {
  const out: string[] = [];
  for (let round = 0; round < 50; round++) {
    const got = await cli.client.receive(group, { maxMessages: 100 });
    if (got.length === 0) return out;
    out.push(...got.map((m) => m.body));
    await cli.client.commit(group, got.map((m) => m.receiptHandle));
  }
  throw new Error('did not drain');
}

describe('startFrom, seek and purge over HTTP', () => {
  it('a group subscribed with startFrom earliest gets the retained messages; seek moves it; purge empties the topic', async () => {
    await cli.client.putTopic('sp-orders', { type: 'standard' });
    for (const body of ['a', 'b', 'c']) await cli.client.send('sp-orders', { body });
    const group = await cli.client.putGroup('sp-replay', { subscriptions: [{ topic: 'sp-orders', startFrom: 'earliest' }] });
    expect(group.subscriptions).toEqual([{ topic: 'sp-orders', startFrom: 'earliest' }]);
    expect((await drain('sp-replay')).sort()).toEqual(['a', 'b', 'c']);

    const sought = await cli.client.seek('sp-replay', { to: 'earliest' });
    expect(sought.group).toBe('sp-replay');
    expect(sought.positions).toHaveLength(4);
    expect((await drain('sp-replay')).sort()).toEqual(['a', 'b', 'c']);

    // The CLI: seek back to the start, then to latest.
    expect(ok(await sluice('groups', 'seek', 'sp-replay', '--to', 'earliest'))).toContain('Group sp-replay moved to earliest:');
    expect((await cli.client.getGroup('sp-replay')).backlog).toBe(3);
    const latest = JSON.parse(ok(await sluice('--json', 'groups', 'seek', 'sp-replay', '--to', 'latest', '--topic', 'sp-orders')));
    expect(latest.positions).toHaveLength(4);
    expect((await cli.client.getGroup('sp-replay')).backlog).toBe(0);

    // Purge: SDK and CLI (which wants --yes).
    await cli.client.seek('sp-replay', { to: 'earliest' });
    const purged = await cli.client.purgeTopic('sp-orders');
    expect(purged).toEqual({ topic: 'sp-orders', purgedAt: expect.stringMatching(/Z$/) });
    expect((await cli.client.getGroup('sp-replay')).backlog).toBe(0);
    expect(await drain('sp-replay')).toEqual([]);
    const unconfirmed = await sluice('topics', 'purge', 'sp-orders');
    expect(unconfirmed.code).not.toBe(0);
    expect(unconfirmed.stderr).toContain('--yes');
    expect(ok(await sluice('topics', 'purge', 'sp-orders', '--yes'))).toMatch(/^Purged topic sp-orders/);
    await cli.client.send('sp-orders', { body: 'after' });
    expect(await drain('sp-replay')).toEqual(['after']);
  });

  it('seek on a FIFO topic over HTTP: the SDK replays each shard in order, the CLI reports the shards moved', async () => {
    await cli.client.putTopic('sp-ledger', { type: 'fifo' });
    await cli.client.putGroup('sp-fifo', { subscriptions: [{ topic: 'sp-ledger' }], deliveryMode: 'concurrent' });
    await cli.client.sendBatch('sp-ledger', ['a1', 'b1', 'a2', 'b2'].map((body) => ({ body, shardKey: body[0]! })));
    const first = await drain('sp-fifo');
    expect(first.filter((b) => b.startsWith('a'))).toEqual(['a1', 'a2']);
    const sought = await cli.client.seek('sp-fifo', { to: 'earliest' });
    expect(sought).toEqual({ group: 'sp-fifo', positions: [], shards: [{ topics: ['sp-ledger'], moved: 2 }] });
    const again = await drain('sp-fifo');
    expect(again.filter((b) => b.startsWith('a'))).toEqual(['a1', 'a2']);
    expect(again.filter((b) => b.startsWith('b'))).toEqual(['b1', 'b2']);
    expect(ok(await sluice('groups', 'seek', 'sp-fifo', '--to', 'latest'))).toContain('sp-ledger: 2 shards moved');
    expect(await drain('sp-fifo')).toEqual([]);
  });

  it('refuses bad seek and purge requests with precise problems and changes nothing', async () => {
    await cli.client.putTopic('sp-bad', { type: 'standard' });
    await cli.client.putTopic('sp-other', { type: 'standard' });
    await cli.client.putGroup('sp-g', { subscriptions: [{ topic: 'sp-bad' }] });
    await cli.client.send('sp-bad', { body: 'stays' });
    const malformed = await refusal(cli.client.seek('sp-g', { to: 'yesterday' }));
    expect(malformed).toMatchObject({ status: 400, code: 'InvalidArgument' });
    expect(malformed.errors?.[0]?.path).toBe('to');
    const future = await refusal(cli.client.seek('sp-g', { to: new Date(Date.now() + 3_600_000).toISOString() }));
    expect(future).toMatchObject({ status: 400, code: 'InvalidArgument', errors: [{ path: 'to', message: 'in the future' }] });
    const notSubscribed = await refusal(cli.client.seek('sp-g', { to: 'latest', topics: ['sp-other'] }));
    expect(notSubscribed).toMatchObject({ status: 400, errors: [{ path: 'topics/0', message: 'not subscribed by this group' }] });
    expect(await refusal(cli.client.seek('sp-nope', { to: 'latest' }))).toMatchObject({ status: 404, code: 'GroupNotFound' });
    expect(await refusal(cli.client.purgeTopic('sp-nope'))).toMatchObject({ status: 404, code: 'TopicNotFound' });
    const unknownField = await refusal(cli.client.seek('sp-g', { to: 'latest', extra: 1 } as never));
    expect(unknownField).toMatchObject({ status: 400 });
    expect((await cli.client.getGroup('sp-g')).backlog).toBe(1);
    expect(await drain('sp-g')).toEqual(['stays']);
  });
});
