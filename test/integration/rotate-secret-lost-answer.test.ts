/**
 * Found by an audit (2026-12-04): rotate-secret whose container dies after the rotation's write, before the answer.
 * The caller saw no answer, still holds the old secret, and asks again (as it must, to learn a
 * secret). Design: "After a rotation the previous secret keeps signing next to the new one for 24
 * hours, so checkers can be updated without a gap." The second rotation makes the first rotation's
 * secret — which nobody ever saw — the previous one, and the secret the endpoint holds stops
 * signing at once: every push fails verification until the endpoint is redeployed.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { pushSecretContext, secretContext } from '../../lib/adapters/aws/names.js';
import { openSigningSecrets } from '../../lib/services/webhook-signing.js';
import { group, producer, topic } from '../helpers/builders.js';
import { throttled } from '../helpers/release-faults.js';
import { FakeClock, harness, testSecrets, testTable } from '../helpers/stores.js';

/** The first call `matches` picks lands, then the container dies (its answer never arrives). */
function crashAfter(client: DynamoDBClient, matches: (command: string, input: unknown) => boolean): { hit: () => boolean } {
  let hit = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (!hit && matches(String(context.commandName), args.input)) {
        hit = true;
        throw throttled();
      }
      return out;
    },
    { step: 'initialize', name: `crash-after-${Math.random()}` },
  );
  return { hit: () => hit };
}

describe('push secret rotation cut off after its write', () => {
  it('the secret the endpoint holds keeps signing after the retried rotation', async () => {
    const { client, doc, table } = await testTable('crash-rot');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    await h.admin.putTopic('orders', topic());
    const { group: created } = await h.admin.putGroup('hooks', group('orders', { push: { url: 'http://127.0.0.1:9/hook' } }));
    const held = (created as { signingSecret?: string }).signingSecret!;

    const crash = crashAfter(client, (command, input) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET ps = :new'));
    await expect(h.admin.rotatePushSecret('hooks')).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    clock.advance(2_000);
    const rotated = await h.admin.rotatePushSecret('hooks');

    const stored = (await h.stores.catalog.getGroup('hooks'))!.pushSecret!;
    const signing = await openSigningSecrets(testSecrets, stored, pushSecretContext('hooks'), clock.now());
    expect(signing).toContain(rotated.signingSecret);
    expect(signing, 'the secret the endpoint verifies with until it is updated').toContain(held);
  });

  it('(producer groups, check-back signatures) the same', async () => {
    const { client, doc, table } = await testTable('crash-rotp');
    const clock = new FakeClock();
    const h = harness(doc, table, { clock });
    const created = await h.transactions.putProducer('shop', producer('http://127.0.0.1:9/check'));
    const held = (created as { signingSecret: string }).signingSecret;
    const crash = crashAfter(client, (command, input) => command === 'UpdateItemCommand' && JSON.stringify(input).includes('SET sec = :new'));
    await expect(h.transactions.rotateSecret('shop')).rejects.toThrow();
    expect(crash.hit()).toBe(true);
    clock.advance(2_000);
    const rotated = await h.transactions.rotateSecret('shop');
    const p = (await h.stores.producers.get('shop'))!;
    const signing = await openSigningSecrets(testSecrets, { sealed: p.sealedSecret, previous: p.sealedPrevious, previousUntil: p.previousUntil, rotatedAt: p.secretRotatedAt }, secretContext('shop'), clock.now());
    expect(signing).toContain(rotated.signingSecret);
    expect(signing, 'the secret the checker verifies with until it is updated').toContain(held);
  });
});

