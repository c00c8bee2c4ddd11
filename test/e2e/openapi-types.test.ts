/**
 * The served OpenAPI document works in a generated client (issue 18): `openapi-typescript`
 * turns `GET /v1/openapi.json` into TypeScript types, and the compiler checks that every
 * request and response type of the SDK (lib/client/types.ts, and the SDK methods' own
 * signatures) is identical to the document's, so a client generated from the document and
 * the SDK agree on every field, optional or not.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { TOKEN, client, startRuntime } from '../helpers/local.js';
import { root } from '../helpers/package-sandbox.js';

/**
 * Type-level checks, compiled by tsc. `Same` is the compiler's identity of types (mutual
 * assignability would accept a missing or extra optional property) and refuses `any`; the
 * `@ts-expect-error` lines prove it fails where it should.
 */
const checks = (sdkTypes: string, sdkClient: string) => `
import type { components, operations } from './openapi.js';
import type * as Sdk from '${sdkTypes}';
import type { SluiceClient } from '${sdkClient}';

type IsAny<T> = 0 extends 1 & T ? true : false;
/**
 * A type written as one object, all the way down: the SDK composes its types from shared
 * parts (a topic with counts is the topic and its counts), the generator writes each one out, and
 * the identity check below tells an intersection from the object it equals. Modifiers are kept.
 */
type Deep<T> = T extends readonly (infer E)[] ? Deep<E>[] : T extends object ? { [K in keyof T]: Deep<T[K]> } : T;
type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Same<A, B> = IsAny<A> extends true ? false : IsAny<B> extends true ? false : Identical<Deep<A>, Deep<B>>;
type Expect<T extends true> = T;
/** An intersection as one object type (the identity check tells them apart). */
type Flat<T> = { [K in keyof T]: T[K] };

type Req<Op extends keyof operations> = operations[Op] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type Res<Op extends keyof operations, Status extends number> = operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer B } }> ? B : never;
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
type Returns<M extends keyof SluiceClient> = SluiceClient[M] extends (...args: never[]) => Promise<infer R> ? R : never;

// Requests: what the SDK sends is what the document describes.
export type Requests = [
  Expect<Same<Sdk.PutTopicInput, Req<'putTopic'>>>,
  Expect<Same<Sdk.PutGroupInput, Req<'putGroup'>>>,
  Expect<Same<Sdk.PatchTopicInput, Req<'patchTopic'>>>,
  Expect<Same<Sdk.PatchGroupInput, Req<'patchGroup'>>>,
  Expect<Same<Sdk.Subscription, Req<'putGroup'>['subscriptions'][number]>>,
  Expect<Same<Sdk.SendBody, Req<'sendMessage'>>>,
  Expect<Same<Sdk.SendBody, Req<'sendBatch'>['entries'][number]>>,
  Expect<Same<Sdk.ReceiveInput, Omit<Req<'receive'>, 'commit'>>>,
  Expect<Same<Parameters<SluiceClient['receiveAndCommit']>[1] | undefined, Req<'receive'>['commit']>>,
  Expect<Same<Sdk.CommitEntry, Req<'commit'>['entries'][number]>>,
  Expect<Same<Sdk.PublishEntry, NonNullable<Req<'commit'>['entries'][number]['publish']>[number]>>,
  Expect<Same<Sdk.PutProducerInput, Req<'putProducer'>>>,
  Expect<Same<Sdk.PageOptions, Query<'listTopics'>>>,
  Expect<Same<Sdk.PageOptions, Query<'listGroups'>>>,
  Expect<Same<Sdk.PageOptions, Query<'listProducers'>>>,
  Expect<Same<Flat<Sdk.PageOptions & { key: string }>, Query<'listMessages'>>>,
];

// Responses: what the document says the server answers is what the SDK's types promise.
export type Responses = [
  Expect<Same<Returns<'health'>, Res<'health', 200>>>,
  Expect<Same<Sdk.Topic, Res<'putTopic', 200>>>,
  Expect<Same<Sdk.TopicDetail, Res<'getTopic', 200>>>,
  Expect<Same<Sdk.TopicList, Res<'listTopics', 200>>>,
  Expect<Same<Sdk.Group, Res<'putGroup', 200>>>,
  Expect<Same<Sdk.Topic, Res<'patchTopic', 200>>>,
  Expect<Same<Sdk.Group, Res<'patchGroup', 200>>>,
  Expect<Same<Sdk.GroupDetail, Res<'getGroup', 200>>>,
  Expect<Same<Sdk.GroupList, Res<'listGroups', 200>>>,
  Expect<Same<Sdk.SendResult, Res<'sendMessage', 201>>>,
  Expect<Same<Sdk.SendBatchResult, Res<'sendBatch', 200>>>,
  Expect<Same<Sdk.ReceiveResult, Res<'receive', 200>>>,
  Expect<Same<Sdk.Delivered, Res<'receive', 200>['messages'][number]>>,
  Expect<Same<Sdk.CommitResult, Res<'commit', 200>>>,
  Expect<Same<Sdk.MessageDetail, Res<'getMessage', 200>>>,
  Expect<Same<Sdk.MessageList, Res<'listMessages', 200>>>,
  Expect<Same<Sdk.Message, Res<'listMessages', 200>['messages'][number]>>,
  Expect<Same<Sdk.Producer, Res<'putProducer', 200>>>,
  Expect<Same<Sdk.ProducerList, Res<'listProducers', 200>>>,
  Expect<Same<Sdk.Producer, Res<'getProducer', 200>>>,
  Expect<Same<Sdk.Producer, Res<'rotateSecret', 200>>>,
  Expect<Same<Sdk.TransactionResolution, Res<'commitTransaction', 200>>>,
  Expect<Same<Sdk.TransactionResolution, Res<'rollbackTransaction', 200>>>,
  Expect<Same<Sdk.Transaction, Res<'getTransaction', 200>>>,
  Expect<Same<Sdk.Problem, components['schemas']['Problem']>>,
];

// The SDK methods' signatures use those same types.
export type Methods = [
  Expect<Same<Parameters<SluiceClient['putTopic']>[1], Req<'putTopic'>>>,
  Expect<Same<Parameters<SluiceClient['putGroup']>[1], Req<'putGroup'>>>,
  Expect<Same<Parameters<SluiceClient['putProducer']>[1], Req<'putProducer'>>>,
  Expect<Same<Returns<'getTopic'>, Res<'getTopic', 200>>>,
  Expect<Same<Returns<'listGroups'>, Res<'listGroups', 200>>>,
  Expect<Same<Returns<'send'>, Res<'sendMessage', 201>>>,
  Expect<Same<Returns<'sendBatch'>, Res<'sendBatch', 200>>>,
  Expect<Same<Returns<'receive'>, Res<'receive', 200>['messages']>>,
  Expect<Same<Returns<'commit'>, Res<'commit', 200>>>,
  Expect<Same<Returns<'findMessages'>, Res<'listMessages', 200>>>,
  Expect<Same<Returns<'getTransaction'>, Res<'getTransaction', 200>>>,
];

export type CanFail = [
  // @ts-expect-error a topic is not a topic with counts
  Expect<Same<Sdk.Topic, Res<'getTopic', 200>>>,
  // @ts-expect-error a send's body is not a batch
  Expect<Same<Sdk.SendBody, Req<'sendBatch'>>>,
  // @ts-expect-error any is refused
  Expect<Same<any, Res<'getTopic', 200>>>,
  // @ts-expect-error a missing optional property is told apart (mutual assignability would not)
  Expect<Same<Omit<Sdk.SendBody, 'tag'>, Req<'sendMessage'>>>,
  // @ts-expect-error an extra optional property is told apart
  Expect<Same<Sdk.Topic & { extra?: string }, Res<'putTopic', 200>>>,
];
`;

let runtime: LocalRuntime;
let dir: string;

beforeAll(async () => {
  runtime = await startRuntime();
  dir = mkdtempSync(join(tmpdir(), 'sluice-openapi-'));
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await runtime?.stop();
});

describe('the served OpenAPI document in a generated client', () => {
  it('generates types with openapi-typescript that are the SDK’s request and response types', async () => {
    const served = await client(runtime.url, TOKEN).get<OpenAPI3>('/v1/openapi.json');
    expect(served.status).toBe(200);
    const generated = astToString(await openapiTS(served.body));
    expect(generated).toContain('export interface operations');
    writeFileSync(join(dir, 'openapi.ts'), generated);
    writeFileSync(join(dir, 'checks.ts'), checks(join(root, 'lib/client/types.ts'), join(root, 'lib/client/client.ts')));

    const program = ts.createProgram([join(dir, 'checks.ts')], {
      strict: true,
      noEmit: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      allowImportingTsExtensions: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(root, 'node_modules/@types')],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (!d.file || d.start === undefined) return message;
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      const text = d.file.text.split('\n')[line]?.trim();
      return `${d.file.fileName.replace(dir, '<generated>')}:${line + 1}: ${message} — ${text}`;
    });
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
