/**
 * The operating commands of `sluice` and their SDK methods against the local runtime (issue 17
 * item 8): `create` aliases, `groups delete`, `visibility`.
 */
import { describe, expect, it } from 'vitest';
import { SluiceApiError } from '../../lib/client/index.js';
import { cliSession } from '../helpers/cli-session.js';

const cli = cliSession();
const { sluice, ok, json } = cli;

describe('create is put', () => {
  it('creates topics, groups and producer groups', async () => {
    expect(ok(await sluice('topics', 'create', 'op-orders', '--type', 'fifo'))).toBe('Topic op-orders (fifo) is ready.\n');
    expect(await json('groups', 'create', 'op-billing', '--subscribe', 'op-orders', '--mode', 'concurrent')).toMatchObject({
      name: 'op-billing',
      deliveryMode: 'concurrent',
      subscriptions: [{ topic: 'op-orders' }],
    });
    const created = await json('producers', 'create', 'op-shop', '--checker-url', 'http://127.0.0.1:9/check');
    expect(created).toMatchObject({ name: 'op-shop', checkerUrl: 'http://127.0.0.1:9/check' });
    expect(created.signingSecret).toMatch(/^whsec_/);
  });
});

describe('groups delete', () => {
  it('deletes a group (CLI and SDK); its leases end with 404 GroupNotFound', async () => {
    await cli.client.putTopic('op-jobs', { type: 'standard' });
    await cli.client.putGroup('op-doomed', { subscriptions: [{ topic: 'op-jobs' }] });
    await cli.client.putGroup('op-doomed-sdk', { subscriptions: [{ topic: 'op-jobs' }] });
    await cli.client.send('op-jobs', { body: 'job' });
    const [lease] = await cli.client.receive('op-doomed', { waitSeconds: 1 });
    expect(lease?.body).toBe('job');

    expect(ok(await sluice('groups', 'delete', 'op-doomed'))).toBe('Deleted group op-doomed.\n');
    const commit = await cli.client.commit('op-doomed', [lease!.receiptHandle]).catch((error: unknown) => error);
    expect(commit).toBeInstanceOf(SluiceApiError);
    expect(commit).toMatchObject({ status: 404, code: 'GroupNotFound' });
    const again = await sluice('groups', 'delete', 'op-doomed');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('GroupNotFound');

    await cli.client.deleteGroup('op-doomed-sdk');
    await expect(cli.client.getGroup('op-doomed-sdk')).rejects.toMatchObject({ status: 404, code: 'GroupNotFound' });
    expect((await json<{ groups: Array<{ name: string }> }>('groups', 'list')).groups.map((g) => g.name)).not.toContain('op-doomed');
  });
});

describe('visibility', () => {
  it('extends a lease and releases it (--seconds 0: delivered again at once)', async () => {
    await cli.client.putTopic('op-tasks', { type: 'standard' });
    await cli.client.putGroup('op-workers', { subscriptions: [{ topic: 'op-tasks' }], visibilityTimeoutSeconds: 1 });
    await cli.client.send('op-tasks', { body: 'task' });
    const [first] = await cli.client.receive('op-workers', { waitSeconds: 1 });
    expect(ok(await sluice('visibility', 'op-workers', first!.receiptHandle, '--seconds', '60'))).toBe('Lease extended by 60s from now.\n');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // Without the extension the 1 s lease would have expired by now.
    expect(await cli.client.receive('op-workers', { waitSeconds: 0 })).toEqual([]);
    expect(await json('visibility', 'op-workers', first!.receiptHandle, '--seconds', '0')).toEqual({
      receiptHandle: first!.receiptHandle,
      visibilityTimeoutSeconds: 0,
    });
    // Released: back after the group's 1 s retry back-off.
    const [second] = await cli.client.receive('op-workers', { waitSeconds: 3 });
    expect(second).toMatchObject({ messageId: first!.messageId, deliveryCount: 2 });
    const stale = await sluice('visibility', 'op-workers', first!.receiptHandle, '--seconds', '5');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('ReceiptHandleExpired');
    const bad = await sluice('visibility', 'op-workers', second!.receiptHandle, '--seconds', '-1');
    expect(bad.code).toBe(2);
  });
});

describe('update is PATCH', () => {
  it('changes only the options given (CLI and SDK)', async () => {
    await cli.client.putTopic('op-feed', { type: 'standard', retentionSeconds: 7200, maxDelaySeconds: 60 });
    await cli.client.putGroup('op-readers', { subscriptions: [{ topic: 'op-feed' }], visibilityTimeoutSeconds: 45 });
    expect(await json('topics', 'update', 'op-feed', '--retention', '3600')).toMatchObject({ retentionSeconds: 3600, maxDelaySeconds: 60 });
    expect(ok(await sluice('groups', 'update', 'op-readers', '--max-deliveries', '4'))).toMatch(/^maxDeliveries: +4$/m);
    expect(await cli.client.getGroup('op-readers')).toMatchObject({ visibilityTimeoutSeconds: 45, maxDeliveries: 4 });
    expect(await cli.client.patchGroup('op-readers', { visibilityTimeoutSeconds: 20 })).toMatchObject({ visibilityTimeoutSeconds: 20, maxDeliveries: 4 });
    expect(await cli.client.patchTopic('op-feed', { maxDelaySeconds: 0 })).toMatchObject({ retentionSeconds: 3600, maxDelaySeconds: 0 });
    // A partial retry policy changes only its fields given; the stored ones stay (defaults here: 1 s, ×2, 600 s).
    expect(ok(await sluice('groups', 'update', 'op-readers', '--retry-max', '120'))).toMatch(
      /^retryPolicy: +\{"initialSeconds":1,"multiplier":2,"maxSeconds":120\}$/m,
    );
    expect(await cli.client.patchGroup('op-readers', { retryPolicy: { initialSeconds: 0 } })).toMatchObject({
      retryPolicy: { initialSeconds: 0, multiplier: 2, maxSeconds: 120 },
    });
    const below = await sluice('groups', 'update', 'op-readers', '--retry-initial', '300');
    expect(below.code).toBe(1);
    expect(below.stderr).toContain('retryPolicy/maxSeconds');
    expect((await cli.client.getGroup('op-readers')).retryPolicy).toEqual({ initialSeconds: 0, multiplier: 2, maxSeconds: 120 });
    expect((await sluice('groups', 'update', 'op-readers', '--retry-multiplier', '11')).code).toBe(2);
    const missing = await sluice('groups', 'update', 'op-nobody', '--visibility', '5');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('GroupNotFound');
  });
});

describe('producers list and delete', () => {
  it('lists producer groups and deletes one (CLI and SDK)', async () => {
    await cli.client.putProducer('op-p1', { checkerUrl: 'http://127.0.0.1:9/c' });
    await cli.client.putProducer('op-p2', { checkerUrl: 'http://127.0.0.1:9/c' });
    const listed = ok(await sluice('producers', 'list'));
    expect(listed).toMatch(/^NAME +CHECKER-URL +INTERVAL +MAX-CHECKS +ON-MAX-CHECKS$/m);
    expect(listed).toMatch(/^op-p1 +http:\/\/127\.0\.0\.1:9\/c +60s +15 +rollback$/m);
    expect(ok(await sluice('producers', 'delete', 'op-p1'))).toBe('Deleted producer group op-p1.\n');
    await cli.client.deleteProducer('op-p2');
    const names: string[] = [];
    for await (const p of cli.client.iterateProducers()) names.push(p.name);
    expect(names).not.toContain('op-p1');
    expect(names).not.toContain('op-p2');
    const missing = await sluice('producers', 'delete', 'op-p1');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('ProducerGroupNotFound');
  });
});
