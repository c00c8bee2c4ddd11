/**
 * The SDK's API types (lib/client/types.ts, written out so that the SDK needs no server code) equal
 * the types of the server's zod schemas (functions/api/schemas.ts). These are compile-time checks:
 * `tsc --noEmit -p .` (the first step of `npm test`) fails when a schema and its client type drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as S from '../../functions/api/schemas.js';
import type * as C from '../../lib/client/types.js';

const CLIENT = fileURLToPath(new URL('../../lib/client/', import.meta.url));

describe('the client SDK', () => {
  it('imports nothing of this repository outside lib/client (it is to be a package of its own)', () => {
    const outside: string[] = [];
    for (const file of readdirSync(CLIENT).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(join(CLIENT, file), 'utf8');
      for (const [, specifier = ''] of source.matchAll(/(?:from|import\()\s*'(\.[^']*)'/g)) {
        const target = relative(CLIENT, join(dirname(join(CLIENT, file)), specifier));
        if (target.startsWith('..')) outside.push(`${file} → ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });
});

describe('client API types', () => {
  it('equal what the server takes (z.input of the request schemas)', () => {
    expectTypeOf<C.PutTopicInput>().branded.toEqualTypeOf<z.input<typeof S.PutTopicBody>>();
    expectTypeOf<C.PutGroupInput>().branded.toEqualTypeOf<z.input<typeof S.PutGroupBody>>();
    expectTypeOf<C.PatchTopicInput>().branded.toEqualTypeOf<z.input<typeof S.PatchTopicBody>>();
    expectTypeOf<C.PatchGroupInput>().branded.toEqualTypeOf<z.input<typeof S.PatchGroupBody>>();
    expectTypeOf<C.Subscription>().branded.toEqualTypeOf<z.input<typeof S.Subscription>>();
    expectTypeOf<C.DeliveryMode>().branded.toEqualTypeOf<NonNullable<z.input<typeof S.PutGroupBody>['deliveryMode']>>();
    expectTypeOf<C.SendBody>().branded.toEqualTypeOf<z.input<typeof S.SendBody>>();
    expectTypeOf<C.ReceiveInput>().branded.toEqualTypeOf<Omit<z.input<typeof S.ReceiveBody>, 'commit'>>();
    expectTypeOf<C.PublishEntry>().branded.toEqualTypeOf<z.input<typeof S.PublishEntry>>();
    expectTypeOf<C.CommitEntry>().branded.toEqualTypeOf<z.input<typeof S.CommitBody>['entries'][number]>();
    expectTypeOf<C.PutProducerInput>().branded.toEqualTypeOf<z.input<typeof S.PutProducerBody>>();
    expectTypeOf<C.OnMaxChecks>().branded.toEqualTypeOf<NonNullable<z.input<typeof S.PutProducerBody>['onMaxChecks']>>();
  });

  it('equal what the server answers (z.output of the response schemas)', () => {
    expectTypeOf<C.Topic>().branded.toEqualTypeOf<z.output<typeof S.TopicSchema>>();
    expectTypeOf<C.TopicDetail>().branded.toEqualTypeOf<z.output<typeof S.TopicDetailSchema>>();
    expectTypeOf<C.TopicList>().branded.toEqualTypeOf<z.output<typeof S.TopicListSchema>>();
    expectTypeOf<C.Group>().branded.toEqualTypeOf<z.output<typeof S.GroupSchema>>();
    expectTypeOf<C.GroupDetail>().branded.toEqualTypeOf<z.output<typeof S.GroupDetailSchema>>();
    expectTypeOf<C.GroupList>().branded.toEqualTypeOf<z.output<typeof S.GroupListSchema>>();
    expectTypeOf<C.ProducerList>().branded.toEqualTypeOf<z.output<typeof S.ProducerListSchema>>();
    expectTypeOf<C.SendResult>().branded.toEqualTypeOf<z.output<typeof S.SendResultSchema>>();
    expectTypeOf<C.SendBatchResult>().branded.toEqualTypeOf<z.output<typeof S.SendBatchResultSchema>>();
    expectTypeOf<C.Delivered>().branded.toEqualTypeOf<z.output<typeof S.DeliveredSchema>>();
    expectTypeOf<C.ReceiveResult>().branded.toEqualTypeOf<z.output<typeof S.ReceiveResultSchema>>();
    expectTypeOf<C.CommitResult>().branded.toEqualTypeOf<z.output<typeof S.CommitResultSchema>>();
    expectTypeOf<C.Message>().branded.toEqualTypeOf<z.output<typeof S.MessageSchema>>();
    expectTypeOf<C.MessageDetail>().branded.toEqualTypeOf<z.output<typeof S.MessageDetailSchema>>();
    expectTypeOf<C.MessageList>().branded.toEqualTypeOf<z.output<typeof S.MessageListSchema>>();
    expectTypeOf<C.Problem>().branded.toEqualTypeOf<z.output<typeof S.ProblemSchema>>();
    expectTypeOf<C.Producer>().branded.toEqualTypeOf<z.output<typeof S.ProducerSchema>>();
    expectTypeOf<C.TransactionResolution>().branded.toEqualTypeOf<z.output<typeof S.TransactionResolutionSchema>>();
    expectTypeOf<C.Transaction>().branded.toEqualTypeOf<z.output<typeof S.TransactionSchema>>();
  });
});
