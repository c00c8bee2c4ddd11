import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { SluiceService, TableAccess } from '../../cdk/index.js';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../cdk/sluice-function.js';
import { routes } from '../../functions/api/routes.js';
import { loadConfig } from '../../functions/commons/config.js';
import { tableDefinition, TTL_ATTRIBUTE } from '../../lib/adapters/dynamodb/table.js';
import { Limits } from '../../lib/domain/model.js';
import { grantsOf, logicalIdOf, resourcesOf, roleGrants, roleOf, sluiceApp, type Grant } from './synth.js';

const alarmTopicArn = 'arn:aws:sns:eu-west-1:123456789012:sluice-alarms';
const writeActions: readonly string[] = TABLE_WRITE_ACTIONS;
const noTableAccess = new Set(['health', 'openapi']);

/** The functions besides the API routes, with their handler modules. */
const background = {
  'timer-minute': 'timers/minute',
  'timer-release': 'timers/release',
  'timer-sweep': 'timers/sweep',
  'check-sweep': 'checks/sweep',
  'check-worker': 'checks/worker',
  'push-worker': 'push/worker',
  'group-metrics': 'metrics/group-metrics',
  dispatcher: 'dispatch/dispatcher',
} as const;
const allFunctions = [...routes.map((r) => r.entry), ...Object.keys(background)];

const CONSUME = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
/** Every grant besides the table, the function's own log group and X-Ray, per function (none if absent). */
const expectedExtraGrants: Record<string, string[]> = {
  // delaySeconds / deliverAt → TimerService.arm: a minute schedule or a delay-queue wake-up;
  // transaction → TimerService.armChecks: a minute schedule or a delayed check-queue message;
  // ...and seal message ids with the deployment's key (MessageIdKeys: opened, or created when missing)
  'send-message': ['iam:PassRole', 'scheduler:CreateSchedule', 'sqs:SendMessage', 'kms:Decrypt', 'kms:Encrypt'],
  'send-batch': ['iam:PassRole', 'scheduler:CreateSchedule', 'sqs:SendMessage', 'kms:Decrypt', 'kms:Encrypt'],
  // Receipt handles and message ids are sealed (lib/domain/message-ids.ts): these open the key,
  // the writers may create it; put-topic creates it before the first topic exists.
  'put-topic': ['kms:Decrypt', 'kms:Encrypt'],
  // …and a parking receive creates its group's doorbell queue (docs/design.md, "Waking SDK consumers")
  receive: ['kms:Decrypt', 'kms:Encrypt', 'sqs:CreateQueue', 'sqs:TagQueue'],
  // AdminService.deleteGroup deletes the group's doorbell queue
  'delete-group': ['sqs:DeleteQueue'],
  commit: ['kms:Decrypt', 'kms:Encrypt'],
  // a commit that leaves a standard topic's claimed commit to its claimant arms a check-back at now + 20 s (check queue)
  'commit-transaction': ['sqs:SendMessage'],
  visibility: ['kms:Decrypt', 'kms:Encrypt'],
  'cancel-message': ['kms:Decrypt', 'kms:Encrypt'],
  'get-message': ['kms:Decrypt'],
  'list-messages': ['kms:Decrypt'],
  // Redrive opens the dead-letter copies' ids.
  // A push group's redrive sends its own push jobs (Redriver.redrive).
  redrive: ['kms:Decrypt', 'kms:Encrypt', 'sqs:SendMessage'],
  // TransactionService.putProducer / rotateSecret seal a new signing secret
  'put-producer': ['kms:Encrypt'],
  'rotate-secret': ['kms:Encrypt'],
  // AdminService.putGroup / patchGroup / rotatePushSecret seal a push group's signing secret
  'put-group': ['kms:Encrypt'],
  'patch-group': ['kms:Encrypt'],
  'rotate-group-secret': ['kms:Encrypt'],
  // opens push secrets; opens and seals message ids and receipt handles (claims, commits, releases,
  // dead letters); re-queues push jobs (retries, hand-over); invokes no Lambda without pushTargets
  'push-worker': [...CONSUME, 'kms:Decrypt', 'kms:Decrypt', 'kms:Encrypt', 'sqs:SendMessage'],
  // onMinute queues second wake-ups and its minute's check-backs; onRelease re-queues what is not due yet
  'timer-minute': ['sqs:SendMessage'],
  'timer-release': [...CONSUME, 'sqs:SendMessage'],
  'check-sweep': ['sqs:SendMessage'],
  // an `unknown` answer arms the next check-back: a delayed check-queue message or a minute schedule
  'check-worker': [...CONSUME, 'iam:PassRole', 'kms:Decrypt', 'scheduler:CreateSchedule', 'sqs:SendMessage'],
  // Lambda's on-failure destination of the table stream mapping (SqsDlq)
  // (and the push route's jobs on the push queue)
  dispatcher: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage', 'sqs:SendMessage'],
};
const extraGrants = (grants: Grant[]) => grants.filter((g) => !/^(dynamodb|logs|xray):/.test(g.action));

let built: ReturnType<typeof sluiceApp>;
let stateful: Template;
let stateless: Template;

// This file checks the per-route layout: the HTTP API entry point, one function per route with
// its own grants. The default entry point (one function behind a function URL) is checked in
// test/cdk/function-url.test.ts.
beforeAll(() => {
  built = sluiceApp({ namePrefix: 'sluice-test', alarmTopicArn, logRetention: RetentionDays.TWO_WEEKS, entryPoint: 'httpApi' });
  stateful = Template.fromStack(built.stateful);
  stateless = Template.fromStack(built.stateless);
});

const functionId = (entry: string) => {
  const fn = built.stateless.service.functions.get(entry);
  if (!fn) throw new Error(`no function for route ${entry}`);
  return logicalIdOf(built.stateless, fn);
};
const idOf = (construct: { node: { defaultChild?: unknown } }) => logicalIdOf(built.stateless, construct);
const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });
/** Every statement of every policy in the template that grants `action`, with the role it is attached to. */
const grantsOfAction = (template: Template, action: string) =>
  Object.keys(resourcesOf(template, 'AWS::IAM::Role')).flatMap((role) =>
    roleGrants(template, role)
      .filter((g) => g.action === action)
      .map((g) => ({ role, ...g })),
  );

describe('stateful stack', () => {
  it('creates the table exactly as tableDefinition() describes it', () => {
    const definition = tableDefinition('unused');
    const tables = resourcesOf(stateful, 'AWS::DynamoDB::Table');
    expect(Object.keys(tables)).toHaveLength(1);
    const [table] = Object.values(tables);
    expect(table?.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: definition.KeySchema,
      GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes,
    });
    expect(table?.Properties?.AttributeDefinitions).toEqual(expect.arrayContaining(definition.AttributeDefinitions ?? []));
    expect(table?.Properties?.AttributeDefinitions).toHaveLength(definition.AttributeDefinitions?.length ?? -1);
  });

  it('turns on TTL, point-in-time recovery, encryption, retention and deletion protection', () => {
    stateful.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      }),
    });
  });

  it('creates a rotated, retained KMS key for producer signing secrets and hands it to the functions', () => {
    stateful.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ EnableKeyRotation: true, Description: Match.stringLikeRegexp('signing secrets') }),
    });
    expect(Object.keys(resourcesOf(stateful, 'AWS::KMS::Key'))).toHaveLength(1);
    expect(built.stateless.service.secretsKey).toBe(built.stateful.secretsKey);
    expect(resourcesOf(stateless, 'AWS::KMS::Key')).toEqual({});
  });

  it('gives the table no physical name (it must stay replaceable)', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::Table', { TableName: Match.absent() });
  });

  it('deletes an unprotected table when asked to', () => {
    const { stateful: stack } = sluiceApp({ removalPolicy: RemovalPolicy.DESTROY });
    Template.fromStack(stack).hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
  });
});

describe('customer managed key', () => {
  it('encrypts the table with a rotated key and lets readers decrypt and writers encrypt', () => {
    const { stateful: keyStack, stateless: fnStack } = sluiceApp({ customerManagedKey: true, entryPoint: 'httpApi' });
    const keys = Template.fromStack(keyStack);
    keys.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    keys.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: Match.anyValue() },
    });
    const template = Template.fromStack(fnStack);
    const actions = (entry: string) => {
      const fn = fnStack.service.functions.get(entry);
      if (!fn) throw new Error(entry);
      return grantsOf(template, logicalIdOf(fnStack, fn)).map((g) => g.action);
    };
    expect(actions('get-topic')).toEqual(expect.arrayContaining(['kms:Decrypt']));
    expect(actions('get-topic')).not.toContain('kms:Encrypt');
    expect(actions('send-message')).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']));
    expect(actions('health').filter((a) => a.startsWith('kms:'))).toEqual([]);
  });
});

describe('HTTP API', () => {
  it('has exactly one route per entry of the route table, each to its own function', () => {
    const apiRoutes = Object.values(resourcesOf(stateless, 'AWS::ApiGatewayV2::Route'));
    expect(apiRoutes.map((r) => r.Properties?.RouteKey).sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    expect(Object.keys(resourcesOf(stateless, 'AWS::Lambda::Function'))).toHaveLength(allFunctions.length);
    expect(new Set(allFunctions.map((entry) => functionId(entry))).size).toBe(allFunctions.length);
  });

  it('requires IAM (SigV4) on every route except GET /health', () => {
    const byKey = new Map(
      Object.values(resourcesOf(stateless, 'AWS::ApiGatewayV2::Route')).map((r) => [r.Properties?.RouteKey, r.Properties?.AuthorizationType]),
    );
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      expect({ key, auth: byKey.get(key) }).toEqual({ key, auth: key === 'GET /health' ? 'NONE' : 'AWS_IAM' });
    }
  });

  it.each([
    'PUT /v1/producers/{producerGroup}',
    'GET /v1/producers/{producerGroup}',
    'POST /v1/producers/{producerGroup}/rotate-secret',
    'POST /v1/transactions/{transactionId}/commit',
    'POST /v1/transactions/{transactionId}/rollback',
    'GET /v1/transactions/{transactionId}',
    'DELETE /v1/topics/{topic}/messages/{messageId}',
  ])('requires IAM on the producer, transaction and cancel route %s', (key) => {
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key, AuthorizationType: 'AWS_IAM' });
  });

  it('logs access in JSON on the auto-deployed $default stage', () => {
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('"requestId":"\\$context.requestId"') },
    });
  });
});

describe('functions', () => {
  it('run on Node.js 22 or newer on arm64, ESM-bundled with an `index.handler` entry', () => {
    const functions = Object.values(resourcesOf(stateless, 'AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      const runtime = String(fn.Properties?.Runtime);
      expect(runtime).toMatch(/^nodejs\d+\.x$/);
      expect(Number(/\d+/.exec(runtime)?.[0])).toBeGreaterThanOrEqual(22);
      expect(fn.Properties?.Architectures).toEqual(['arm64']);
      expect(fn.Properties?.Handler).toBe('index.handler');
      expect(fn.Properties?.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });

  it.each(Object.entries(background))('include %s (functions/%s.ts) on Node.js 22, arm64', (name, handlerModule) => {
    const fn = built.stateless.service.functions.get(name);
    expect(fn?.handlerModule).toBe(handlerModule);
    expect(stateless.toJSON().Resources[functionId(name)].Properties).toMatchObject({
      FunctionName: `sluice-test-${name}`,
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
    });
  });

  it('get the table name and the Powertools settings from the environment', () => {
    const tableArnOrName = Match.objectLike({ 'Fn::GetStackOutput': Match.objectLike({ StackName: built.stateful.stackName }) });
    for (const entry of allFunctions) {
      stateless.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `sluice-test-${entry}`,
        Environment: {
          Variables: Match.objectLike({
            SLUICE_TABLE_NAME: tableArnOrName,
            POWERTOOLS_SERVICE_NAME: 'sluice',
            POWERTOOLS_LOG_LEVEL: 'INFO',
            NODE_OPTIONS: '--enable-source-maps',
          }),
        },
      });
    }
  });

  it('all get the AWS timers, queues, scheduler and secrets settings', () => {
    const service = built.stateless.service;
    const expected = {
      SLUICE_TIMERS: 'aws',
      SLUICE_SCHEDULE_GROUP: 'sluice-test-timers',
      SLUICE_SCHEDULER_ROLE_ARN: getAtt(idOf(service.timerSchedulerRole)),
      SLUICE_TIMER_FUNCTION_ARN: {
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':function:sluice-test-timer-minute']],
      },
      SLUICE_DELAY_QUEUE_URL: { Ref: idOf(service.delayQueue.queue) },
      SLUICE_CHECK_QUEUE_URL: { Ref: idOf(service.checkQueue.queue) },
      SLUICE_KMS_KEY_ID: { 'Fn::GetStackOutput': expect.objectContaining({ StackName: built.stateful.stackName, OutputName: expect.stringMatching(/SecretsKey/) }) },
      SLUICE_CHECK_TIMEOUT_MS: String(Limits.checkTimeoutMs),
      SLUICE_NOTIFIER: 'activity',
      SLUICE_PACK_SEGMENTS: 'on',
    };
    for (const entry of allFunctions) {
      const variables = stateless.toJSON().Resources[functionId(entry)].Properties.Environment.Variables as Record<string, unknown>;
      expect({ entry, variables }).toEqual({ entry, variables: expect.objectContaining(expected) });
      // …and they pass the handlers' own configuration check (deploy-time values stand in for tokens).
      const resolved = Object.fromEntries(
        Object.entries(variables).map(([key, value]) => [
          key,
          typeof value === 'string' ? value : key.endsWith('_URL') ? 'https://sqs.eu-west-1.amazonaws.com/123456789012/q' : `arn:aws:x:eu-west-1:123456789012:${key}`,
        ]),
      );
      expect(() => loadConfig(resolved)).not.toThrow();
    }
    stateless.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'sluice-test-timer-minute' });
  });

  it('packSegments: false turns segment packing off in every function (an upgrade\'s first step)', () => {
    const { stateless: stack } = sluiceApp({ packSegments: false });
    const template = Template.fromStack(stack).toJSON();
    const values = Object.values(template.Resources as Record<string, { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> } } }>)
      .filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SLUICE_TABLE_NAME !== undefined)
      .map((r) => r.Properties.Environment?.Variables?.SLUICE_PACK_SEGMENTS);
    // The data plane, the API, the dispatcher, the timers, the push and check workers.
    expect(values.length).toBeGreaterThanOrEqual(8);
    expect(new Set(values)).toEqual(new Set(['off']));
  });

  it('name timer-minute up front without a prefix too, so its ARN in the environment is its own', () => {
    const { stateless: stack } = sluiceApp();
    const template = Template.fromStack(stack);
    const minute = stack.service.functions.get('timer-minute');
    if (!minute) throw new Error('no timer-minute');
    const properties = template.toJSON().Resources[logicalIdOf(stack, minute)].Properties;
    expect(properties.FunctionName).toMatch(/^[A-Za-z0-9-]{1,64}$/);
    const arn = properties.Environment.Variables.SLUICE_TIMER_FUNCTION_ARN['Fn::Join'][1].at(-1);
    expect(arn).toBe(`:function:${properties.FunctionName}`);
    for (const fn of stack.service.functions.values()) {
      expect(template.toJSON().Resources[logicalIdOf(stack, fn)].Properties.Environment.Variables.SLUICE_TIMER_FUNCTION_ARN).toEqual(
        properties.Environment.Variables.SLUICE_TIMER_FUNCTION_ARN,
      );
    }
  });

  it('give the long poll of receive more time than its longest wait, within the HTTP API limit', () => {
    const receive = stateless.toJSON().Resources[functionId('receive')];
    expect(receive.Properties.Timeout).toBeGreaterThan(Limits.receiveMaxWaitSeconds);
    expect(receive.Properties.Timeout).toBeLessThan(30);
    // It mostly waits, and the wait is billed by memory × time: the smallest memory.
    expect(receive.Properties.MemorySize).toBe(128);
    expect(stateless.toJSON().Resources[functionId('send-message')].Properties.MemorySize).toBe(512);
  });

  it('write to their own log group with the configured retention', () => {
    for (const entry of allFunctions) {
      const fn = stateless.toJSON().Resources[functionId(entry)];
      const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref as string;
      expect(stateless.toJSON().Resources[logGroupId]).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        Properties: { LogGroupName: `/aws/lambda/sluice-test-${entry}`, RetentionInDays: 14 },
        // Named log groups must go with the stack, or a redeployment with the same prefix fails.
        DeletionPolicy: 'Delete',
      });
    }
  });
});

describe('least privilege', () => {
  it('uses no AWS managed policies on function roles', () => {
    for (const role of Object.values(resourcesOf(stateless, 'AWS::IAM::Role'))) {
      expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    }
  });

  it.each(routes.filter((r) => r.method === 'GET'))('GET $path ($entry) can read but not write', (route) => {
    const actions = grantsOf(stateless, functionId(route.entry)).map((g) => g.action);
    expect(actions.filter((a) => writeActions.includes(a) || /^dynamodb:(Batch)?Write|^dynamodb:\*$/.test(a))).toEqual([]);
    const tableActions = actions.filter((a) => a.startsWith('dynamodb:')).sort();
    expect(tableActions).toEqual(noTableAccess.has(route.entry) ? [] : [...TABLE_READ_ACTIONS].sort());
  });

  it.each(routes.filter((r) => r.method !== 'GET'))('$method $path ($entry) can read and write items', (route) => {
    const actions = grantsOf(stateless, functionId(route.entry)).map((g) => g.action);
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS].sort());
  });

  it.each(allFunctions)('%s has only the grants beyond the table that its code paths need', (entry) => {
    const actions = extraGrants(grantsOf(stateless, functionId(entry))).map((g) => g.action);
    expect(actions.sort()).toEqual([...(expectedExtraGrants[entry] ?? [])].sort());
  });

  it('lets the background functions read and write the table, but the check sweep only read', () => {
    const tableActions = (entry: string) =>
      grantsOf(stateless, functionId(entry))
        .map((g) => g.action)
        .filter((a) => a.startsWith('dynamodb:'))
        .sort();
    for (const entry of ['timer-minute', 'timer-release', 'timer-sweep', 'check-worker']) {
      expect(tableActions(entry)).toEqual([...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS].sort());
    }
    expect(tableActions('check-sweep')).toEqual([...TABLE_READ_ACTIONS].sort());
  });

  it('limits iam:PassRole to the timer scheduler role, passed to EventBridge Scheduler only', () => {
    const passes = grantsOfAction(stateless, 'iam:PassRole');
    expect(passes.map((g) => g.role).sort()).toEqual(['send-message', 'send-batch', 'check-worker'].map((e) => roleOf(stateless, functionId(e))).sort());
    for (const grant of passes) {
      expect(grant.resource).toEqual(getAtt(idOf(built.stateless.service.timerSchedulerRole)));
      expect(grant.condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    }
  });

  it('limits scheduler:CreateSchedule to the sluice-m* schedules of the schedule group', () => {
    const creates = grantsOfAction(stateless, 'scheduler:CreateSchedule');
    expect(creates).toHaveLength(3); // send-message, send-batch, check-worker
    for (const grant of creates) {
      expect(grant.resource).toEqual({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':scheduler:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':schedule/sluice-test-timers/sluice-m*']],
      });
    }
    expect(grantsOfAction(stateless, 'scheduler:*')).toEqual([]);
    expect(Object.keys(resourcesOf(stateless, 'AWS::IAM::Policy')).length).toBeGreaterThan(0);
    const schedulerActions = Object.keys(resourcesOf(stateless, 'AWS::IAM::Role'))
      .flatMap((role) => roleGrants(stateless, role))
      .filter((g) => g.action.startsWith('scheduler:'))
      .map((g) => g.action);
    expect(new Set(schedulerActions)).toEqual(new Set(['scheduler:CreateSchedule']));
  });

  it('sends to the delay queue only from the functions that arm timers, to the check queue only from those that dispatch or arm check-backs', () => {
    const service = built.stateless.service;
    const sendersTo = (queue: { node: { defaultChild?: unknown } }) =>
      grantsOfAction(stateless, 'sqs:SendMessage')
        .filter((g) => [g.resource].flat().some((r) => JSON.stringify(r) === JSON.stringify(getAtt(idOf(queue)))))
        .map((g) => g.role)
        .sort();
    const roles = (...entries: string[]) => entries.map((e) => roleOf(stateless, functionId(e))).sort();
    expect(sendersTo(service.delayQueue.queue)).toEqual(roles('send-message', 'send-batch', 'timer-minute', 'timer-release'));
    // commit-transaction: a commit that leaves a claimed commit to its claimant arms a check-back that finishes it.
    expect(sendersTo(service.checkQueue.queue)).toEqual(roles('check-sweep', 'check-worker', 'commit-transaction', 'send-message', 'send-batch', 'timer-minute'));
    expect(sendersTo(service.dispatcher.deadLetterQueue)).toEqual(roles('dispatcher'));
    // redrive: a push group's redrive sends its own push jobs.
    expect(sendersTo(service.pushQueue.queue)).toEqual(roles('dispatcher', 'push-worker', 'redrive'));
    // One statement per role (resources merged), but two for the dispatcher (its on-failure destination's and the push route's).
    expect(grantsOfAction(stateless, 'sqs:SendMessage')).toHaveLength(11);
  });

  it('lets only the check worker decrypt producer secrets, and only put-producer and rotate-secret encrypt them', () => {
    const context = { StringEquals: { 'kms:EncryptionContext:purpose': 'sluice-producer-signing-secret' } };
    const ids = { StringEquals: { 'kms:EncryptionContext:purpose': 'sluice-message-ids' } };
    const push = { StringEquals: { 'kms:EncryptionContext:purpose': 'sluice-push-signing-secret' } };
    const pushSecrets = (action: string) => grantsOfAction(stateless, action).filter((g) => JSON.stringify(g.condition) === JSON.stringify(push));
    expect(pushSecrets('kms:Decrypt').map((g) => g.role)).toEqual([roleOf(stateless, functionId('push-worker'))]);
    expect(pushSecrets('kms:Encrypt').map((g) => g.role).sort()).toEqual(['put-group', 'patch-group', 'rotate-group-secret'].map((e) => roleOf(stateless, functionId(e))).sort());
    const secrets = (action: string) => grantsOfAction(stateless, action).filter((g) => JSON.stringify(g.condition) === JSON.stringify(context));
    const decrypts = secrets('kms:Decrypt');
    expect(decrypts.map((g) => g.role)).toEqual([roleOf(stateless, functionId('check-worker'))]);
    const encrypts = secrets('kms:Encrypt');
    expect(encrypts.map((g) => g.role).sort()).toEqual(['put-producer', 'rotate-secret'].map((e) => roleOf(stateless, functionId(e))).sort());
    // Every other use of the secrets key is the message-id key's, bound to its own context.
    for (const grant of [...grantsOfAction(stateless, 'kms:Decrypt'), ...grantsOfAction(stateless, 'kms:Encrypt')]) {
      expect([context, ids, push]).toContainEqual(grant.condition);
      expect(grant.resource).toMatchObject({ 'Fn::GetStackOutput': { StackName: built.stateful.stackName, OutputName: expect.stringMatching(/SecretsKey/) } });
    }
    expect(grantsOfAction(stateless, 'kms:*')).toEqual([]);
  });

  it('lets only the code that seals or opens message ids use the message-id key (the push worker among it), and only writers create it', () => {
    const ids = JSON.stringify({ StringEquals: { 'kms:EncryptionContext:purpose': 'sluice-message-ids' } });
    const rolesWith = (action: string) => grantsOfAction(stateless, action).filter((g) => JSON.stringify(g.condition) === ids).map((g) => g.role).sort();
    const roles = (...entries: string[]) => entries.map((e) => roleOf(stateless, functionId(e))).sort();
    const writers = ['put-topic', 'send-message', 'send-batch', 'receive', 'commit', 'visibility', 'cancel-message', 'redrive'];
    // The push worker claims, commits and releases as receive, commit and visibility do (and dead-letters).
    expect(rolesWith('kms:Decrypt')).toEqual(roles(...writers, 'push-worker', 'get-message', 'list-messages'));
    expect(rolesWith('kms:Encrypt')).toEqual(roles(...writers, 'push-worker'));
  });

  it('keeps secrets decryption to the check worker with a customer managed table key too', () => {
    const { stateless: stack } = sluiceApp({ customerManagedKey: true });
    const template = Template.fromStack(stack);
    const onSecretsKey = grantsOfAction(template, 'kms:Decrypt').filter(
      (g) => JSON.stringify(g.resource).includes('SecretsKey') && JSON.stringify(g.condition).includes('sluice-producer-signing-secret'),
    );
    const worker = stack.service.functions.get('check-worker');
    if (!worker) throw new Error('no check-worker');
    expect(onSecretsKey.map((g) => g.role)).toEqual([roleOf(template, logicalIdOf(stack, worker))]);
  });

  it('grants table actions on the table and its named index only, never on *', () => {
    for (const entry of allFunctions) {
      for (const grant of grantsOf(stateless, functionId(entry)).filter((g) => g.action.startsWith('dynamodb:'))) {
        expect(JSON.stringify(grant.resource)).not.toMatch(/"\*"|index\/\*/);
        expect(JSON.stringify(grant.resource)).toContain(built.stateful.stackName);
      }
    }
  });
});

describe('alarms', () => {
  const alarmsOn = (metric: string, dimension: string, ref: string) =>
    Object.values(resourcesOf(stateless, 'AWS::CloudWatch::Alarm')).filter(
      (a) =>
        a.Properties?.MetricName === metric &&
        JSON.stringify(a.Properties?.Dimensions) === JSON.stringify([{ Name: dimension, Value: { Ref: ref } }]),
    );

  it.each(allFunctions)('watch errors and throttles of %s', (entry) => {
    for (const metric of ['Errors', 'Throttles']) {
      const [alarm, ...others] = alarmsOn(metric, 'FunctionName', functionId(entry));
      expect(others).toEqual([]);
      expect(alarm?.Properties).toMatchObject({ Namespace: 'AWS/Lambda', Threshold: 1, AlarmActions: [alarmTopicArn] });
    }
  });

  it('watch 5xx answers of the API', () => {
    const [apiId] = Object.keys(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api'));
    const [alarm] = alarmsOn('5xx', 'ApiId', apiId ?? '');
    expect(alarm?.Properties).toMatchObject({ Namespace: 'AWS/ApiGateway', Statistic: 'Sum', Threshold: 1, AlarmActions: [alarmTopicArn] });
  });

  const queueAlarm = (metric: string, queue: { node: { defaultChild?: unknown } }) => {
    const found = Object.values(resourcesOf(stateless, 'AWS::CloudWatch::Alarm')).filter(
      (a) =>
        a.Properties?.MetricName === metric &&
        JSON.stringify(a.Properties?.Dimensions) === JSON.stringify([{ Name: 'QueueName', Value: getAtt(idOf(queue), 'QueueName') }]),
    );
    expect(found).toHaveLength(1);
    return found[0]?.Properties;
  };

  it('watch the age of the oldest message on the delay and check queues', () => {
    const { delayQueue, checkQueue } = built.stateless.service;
    const delay = queueAlarm('ApproximateAgeOfOldestMessage', delayQueue.queue);
    // A wake-up may wait up to 900 s (DelaySeconds) before it is even visible.
    expect(delay).toMatchObject({ Namespace: 'AWS/SQS', Statistic: 'Maximum', AlarmActions: [alarmTopicArn] });
    expect(delay?.Threshold).toBeGreaterThan(900);
    expect(delay?.Threshold).toBeLessThanOrEqual(1800);
    const check = queueAlarm('ApproximateAgeOfOldestMessage', checkQueue.queue);
    expect(check).toMatchObject({ Namespace: 'AWS/SQS', Statistic: 'Maximum', AlarmActions: [alarmTopicArn] });
    // Armed check-backs, too, wait up to 900 s (DelaySeconds) before they are visible.
    expect(check?.Threshold).toBeGreaterThan(900);
    expect(check?.Threshold).toBeLessThanOrEqual(1800);
  });

  it('watch dead-letter depth of both queues from the first message', () => {
    const { delayQueue, checkQueue } = built.stateless.service;
    for (const dlq of [delayQueue.deadLetterQueue, checkQueue.deadLetterQueue]) {
      expect(queueAlarm('ApproximateNumberOfMessagesVisible', dlq)).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmActions: [alarmTopicArn],
      });
    }
  });

  it('watch invocations EventBridge Scheduler dropped in the schedule group', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Scheduler',
      MetricName: 'InvocationDroppedCount',
      Dimensions: [{ Name: 'ScheduleGroup', Value: 'sluice-test-timers' }],
      AlarmActions: [alarmTopicArn],
    });
  });
});

describe('timers and check-back', () => {
  it('create one schedule group for the one-time minute schedules, deleted with the stack', () => {
    const groups = resourcesOf(stateless, 'AWS::Scheduler::ScheduleGroup');
    expect(Object.values(groups)).toEqual([
      expect.objectContaining({ Properties: { Name: 'sluice-test-timers' }, DeletionPolicy: 'Delete' }),
    ]);
  });

  it('let EventBridge Scheduler invoke timer-minute, and nothing else, through the timer scheduler role', () => {
    const roleId = idOf(built.stateless.service.timerSchedulerRole);
    const role = stateless.toJSON().Resources[roleId];
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' }, 'aws:SourceArn': getAtt(idOf(built.stateless.service.scheduleGroup)) },
        },
      },
    ]);
    expect(roleGrants(stateless, roleId)).toEqual([{ action: 'lambda:InvokeFunction', resource: getAtt(functionId('timer-minute')) }]);
  });

  it.each(['timer-sweep', 'check-sweep', 'group-metrics'])('run %s every minute in the schedule group, through a role that may invoke only it', (entry) => {
    const schedules = Object.values(resourcesOf(stateless, 'AWS::Scheduler::Schedule'));
    expect(schedules).toHaveLength(3);
    const [schedule, ...others] = schedules.filter(
      (s) => JSON.stringify((s.Properties?.Target as { Arn: unknown }).Arn) === JSON.stringify(getAtt(functionId(entry))),
    );
    expect(others).toEqual([]);
    expect(schedule?.Properties).toMatchObject({
      Name: `sluice-test-${entry}`,
      GroupName: 'sluice-test-timers',
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: { RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } },
    });
    const roleId = (schedule?.Properties?.Target as { RoleArn: { 'Fn::GetAtt': [string, string] } }).RoleArn['Fn::GetAtt'][0];
    expect(roleGrants(stateless, roleId)).toEqual([{ action: 'lambda:InvokeFunction', resource: getAtt(functionId(entry)) }]);
    expect(stateless.toJSON().Resources[roleId].Properties.AssumeRolePolicyDocument.Statement[0].Condition.StringEquals).toMatchObject({
      'aws:SourceAccount': { Ref: 'AWS::AccountId' },
    });
  });

  it('invoke no function from any other event source than these schedules, the three queues and the table stream', () => {
    const invokers = Object.keys(resourcesOf(stateless, 'AWS::IAM::Role')).filter((role) =>
      roleGrants(stateless, role).some((g) => g.action === 'lambda:InvokeFunction'),
    );
    // The minute-schedule role and one role per every-minute schedule (timer-sweep, check-sweep, group-metrics).
    expect(invokers).toHaveLength(4);
    // delay queue → timer-release, check queue → check-worker, push queue → push-worker, table stream → dispatcher.
    expect(Object.keys(resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping'))).toHaveLength(4);
  });

  it('wire the delay queue to timer-release with partial batch responses', () => {
    const { delayQueue } = built.stateless.service;
    const mappings = Object.values(resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties?.EventSourceArn) === JSON.stringify(getAtt(idOf(delayQueue.queue))),
    );
    expect(mappings.map((m) => m.Properties)).toEqual([
      expect.objectContaining({ FunctionName: { Ref: functionId('timer-release') }, FunctionResponseTypes: ['ReportBatchItemFailures'] }),
    ]);
  });

  it('wire the check queue to check-worker with bounded concurrency and partial batch responses', () => {
    const { checkQueue } = built.stateless.service;
    const mappings = Object.values(resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties?.EventSourceArn) === JSON.stringify(getAtt(idOf(checkQueue.queue))),
    );
    expect(mappings.map((m) => m.Properties)).toEqual([
      expect.objectContaining({
        FunctionName: { Ref: functionId('check-worker') },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 10 },
      }),
    ]);
  });

  it('take the check-back concurrency from the props, within what SQS event sources allow', () => {
    const { stateless: stack } = sluiceApp({ checkConcurrency: 25 });
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 25 } });
    expect(() => sluiceApp({ checkConcurrency: 1 })).toThrow(/checkConcurrency/);
  });

  it('encrypt the work queues and their DLQs, refuse plain HTTP, and redrive to the DLQ', () => {
    const { delayQueue, checkQueue, pushQueue, functions } = built.stateless.service;
    const resources = stateless.toJSON().Resources;
    for (const [work, consumer] of [
      [delayQueue, 'timer-release'],
      [checkQueue, 'check-worker'],
      [pushQueue, 'push-worker'],
    ] as const) {
      const queue = resources[idOf(work.queue)].Properties;
      const dlqId = idOf(work.deadLetterQueue);
      expect(queue).toMatchObject({ SqsManagedSseEnabled: true, RedrivePolicy: { deadLetterTargetArn: getAtt(dlqId), maxReceiveCount: 5 } });
      const timeout = resources[functionId(consumer)].Properties.Timeout as number;
      expect(functions.get(consumer)).toBeDefined();
      expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
      expect(resources[dlqId].Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    }
    const policies = Object.values(resourcesOf(stateless, 'AWS::SQS::QueuePolicy'));
    // The three work queues, their DLQs, and the dispatcher's on-failure queue (test/cdk/dispatcher.test.ts).
    expect(policies).toHaveLength(7);
    for (const policy of policies) {
      expect(JSON.stringify(policy.Properties?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
  });

  it('give the stack outputs the README names: API URL and invoke ARN, receive URL, schedule group, dead-letter queues', () => {
    const outputs = stateless.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(['ApiInvokeArn', 'ApiUrl', 'CheckDeadLetterQueueUrl', 'DelayDeadLetterQueueUrl', 'ReceiveUrl', 'ScheduleGroupName']);
    // Behind the HTTP API receives go to the API itself: its receive route runs a function of its own.
    expect(outputs.ReceiveUrl?.Value).toEqual(outputs.ApiUrl?.Value);
    expect(JSON.stringify(outputs.ApiInvokeArn?.Value)).toContain(':execute-api:');
    expect(Object.keys(stateful.toJSON().Outputs ?? {})).toEqual(expect.arrayContaining(['SecretsKeyArn', 'TableName']));
  });
});

describe('SluiceService as an L3 construct in one stack', () => {
  const oneStack = () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'UserStack');
    return { stack, service: new SluiceService(stack, 'Queue', { entryPoint: 'httpApi' }) };
  };

  it('creates its own table and secrets key and wires every function to them', () => {
    const { stack, service } = oneStack();
    const template = Template.fromStack(stack);
    const [tableId, ...more] = Object.keys(resourcesOf(template, 'AWS::DynamoDB::Table'));
    expect(more).toEqual([]);
    expect(service.functions.size).toBe(allFunctions.length);
    const [keyId, ...moreKeys] = Object.keys(resourcesOf(template, 'AWS::KMS::Key'));
    expect(moreKeys).toEqual([]);
    template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ EnableKeyRotation: true }) });
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SLUICE_TABLE_NAME: { Ref: tableId }, SLUICE_KMS_KEY_ID: getAtt(keyId ?? '') }) },
    });
  });

  it('takes a further function with one call: role, log group, environment, grants and two alarms', () => {
    const counts = (t: Template) =>
      Object.fromEntries(
        ['AWS::Lambda::Function', 'AWS::IAM::Role', 'AWS::Logs::LogGroup', 'AWS::CloudWatch::Alarm'].map((type) => [type, Object.keys(t.findResources(type)).length]),
      );
    const before = counts(Template.fromStack(oneStack().stack));
    const { stack, service } = oneStack();
    const fn = service.addFunction({ name: 'sweeper', handlerModule: 'api/health', tableAccess: TableAccess.READ_WRITE });
    const template = Template.fromStack(stack);
    expect(counts(template)).toEqual({
      'AWS::Lambda::Function': (before['AWS::Lambda::Function'] ?? 0) + 1,
      'AWS::IAM::Role': (before['AWS::IAM::Role'] ?? 0) + 1,
      'AWS::Logs::LogGroup': (before['AWS::Logs::LogGroup'] ?? 0) + 1,
      'AWS::CloudWatch::Alarm': (before['AWS::CloudWatch::Alarm'] ?? 0) + 2,
    });
    expect(template.toJSON().Resources[logicalIdOf(stack, fn)].Properties.Environment.Variables).toMatchObject({ SLUICE_TIMERS: 'aws' });
    const actions = grantsOf(template, logicalIdOf(stack, fn)).map((g) => g.action);
    expect(actions).toEqual(expect.arrayContaining([...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS]));
    expect(extraGrants(grantsOf(template, logicalIdOf(stack, fn)))).toEqual([]);
    expect(() => service.addFunction({ name: 'sweeper', handlerModule: 'api/health', tableAccess: TableAccess.NONE })).toThrow(/already exists/);
  });
});
