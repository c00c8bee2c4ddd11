/**
 * The default entry point: every v1 route in one function (`api`) behind a Lambda function URL
 * with AWS_IAM auth — no HTTP API, no public invoke, callers granted through `grantInvoke`.
 * test/cdk/stacks.test.ts checks the per-route layout of `entryPoint: 'httpApi'`.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTION, RECEIVE_FUNCTION, SluiceService } from '../../cdk/index.js';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../cdk/sluice-function.js';
import { MESSAGE_ID_KEY_PURPOSE, PUSH_SECRET_CONTEXT_PURPOSE, SECRET_CONTEXT_PURPOSE } from '../../lib/adapters/aws/names.js';
import { Limits } from '../../lib/domain/model.js';
import { grantsOf, logicalIdOf, resourcesOf, roleGrants, sluiceApp } from './synth.js';

const alarmTopicArn = 'arn:aws:sns:eu-west-1:123456789012:sluice-alarms';
const background = ['timer-minute', 'timer-release', 'timer-sweep', 'check-sweep', 'check-worker', 'push-worker', 'group-metrics', 'dispatcher'];

let built: ReturnType<typeof sluiceApp>;
let template: Template;
let apiId: string;
let receiveId: string;

beforeAll(() => {
  built = sluiceApp({ namePrefix: 'sluice-url', alarmTopicArn });
  template = Template.fromStack(built.stateless);
  const fn = built.stateless.service.functions.get(API_FUNCTION);
  if (!fn) throw new Error('no api function');
  apiId = logicalIdOf(built.stateless, fn);
  const receive = built.stateless.service.functions.get(RECEIVE_FUNCTION);
  if (!receive) throw new Error('no receive function');
  receiveId = logicalIdOf(built.stateless, receive);
});

const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });

describe('function URL entry point (default)', () => {
  it('is the default: one api function and a receive function, each with one function URL, AWS_IAM auth, buffered (6 MB), no HTTP API', () => {
    expect(built.stateless.service.entryPoint).toBe('functionUrl');
    const urls = Object.values(resourcesOf(template, 'AWS::Lambda::Url'));
    expect(urls.map((u) => u.Properties)).toEqual([
      { AuthType: 'AWS_IAM', TargetFunctionArn: getAtt(apiId) },
      { AuthType: 'AWS_IAM', TargetFunctionArn: getAtt(receiveId) },
    ]);
    for (const type of ['AWS::ApiGatewayV2::Api', 'AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Stage', 'AWS::ApiGatewayV2::Integration']) {
      expect({ type, count: Object.keys(resourcesOf(template, type)).length }).toEqual({ type, count: 0 });
    }
    expect([...built.stateless.service.functions.keys()].sort()).toEqual([API_FUNCTION, RECEIVE_FUNCTION, ...background].sort());
    expect(template.toJSON().Resources[apiId].Properties).toMatchObject({
      FunctionName: 'sluice-url-api',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
    });
    expect(built.stateless.service.functions.get(API_FUNCTION)?.handlerModule).toBe('api/function-url');
  });

  it('runs receive alone at 128 MB with the long poll\'s timeout and only what receive needs', () => {
    expect(built.stateless.service.receiveFunction?.handlerModule).toBe('api/receive-url');
    expect(template.toJSON().Resources[receiveId].Properties).toMatchObject({ FunctionName: 'sluice-url-receive', MemorySize: 128, Timeout: 28, Architectures: ['arm64'] });
    const grants = grantsOf(template, receiveId);
    const actions = new Set(grants.map((g) => g.action));
    for (const action of [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS, 'kms:Decrypt', 'kms:Encrypt']) {
      expect({ action, granted: actions.has(action) }).toEqual({ action, granted: true });
    }
    // No timers, no producer or push secrets: only the message-id key (receipt handles, dead-letter copies)…
    expect([...actions].filter((a) => /^(scheduler|iam):/.test(a))).toEqual([]);
    // …and creating doorbell queues on the deployment's prefix, nothing else of SQS.
    const sqs = grants.filter((g) => g.action.startsWith('sqs:'));
    expect(sqs.map((g) => g.action).sort()).toEqual(['sqs:CreateQueue', 'sqs:TagQueue']);
    for (const g of sqs) expect(JSON.stringify(g.resource)).toMatch(/:sqs:.*:sluice-url-bell-\*"/);
    const keyConditions = grants.filter((g) => g.action.startsWith('kms:')).map((g) => JSON.stringify(g.condition));
    expect(new Set(keyConditions)).toEqual(new Set([JSON.stringify({ StringEquals: { [`kms:EncryptionContext:${MESSAGE_ID_KEY_PURPOSE.key}`]: MESSAGE_ID_KEY_PURPOSE.value } })]));
  });

  it('allows no public invoke: no resource-based permission on the api or receive function at all', () => {
    const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter((p) =>
      [apiId, receiveId].some((id) => JSON.stringify(p.Properties?.FunctionName) === JSON.stringify(getAtt(id)) || JSON.stringify(p.Properties?.FunctionName) === JSON.stringify({ Ref: id })),
    );
    expect(permissions).toEqual([]);
    expect(JSON.stringify(resourcesOf(template, 'AWS::Lambda::Permission'))).not.toContain('"FunctionUrlAuthType":"NONE"');
  });

  it('gives the long poll of receive and a redrive page their time (function URLs have no 30 s integration limit)', () => {
    const timeout = template.toJSON().Resources[apiId].Properties.Timeout as number;
    expect(timeout).toBeGreaterThan(Limits.receiveMaxWaitSeconds);
    expect(timeout).toBe(29);
  });

  it('holds the grants of every route: table read and write, timers, producer secrets, the message-id key', () => {
    const grants = grantsOf(template, apiId);
    const actions = new Set(grants.map((g) => g.action));
    for (const action of [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS, 'scheduler:CreateSchedule', 'iam:PassRole', 'sqs:SendMessage', 'kms:Encrypt', 'kms:Decrypt']) {
      expect({ action, granted: actions.has(action) }).toEqual({ action, granted: true });
    }
    // …and nothing the background functions alone need: no queue consumption, no stream reads.
    expect([...actions].filter((a) => /^sqs:(ReceiveMessage|DeleteMessage)$|^dynamodb:(GetRecords|GetShardIterator|DescribeStream)$/.test(a))).toEqual([]);
    // kms:Decrypt only of the message-id key: producer secrets are opened by the check worker alone.
    const decrypts = grants.filter((g) => g.action === 'kms:Decrypt').map((g) => g.condition);
    expect(decrypts).toEqual([{ StringEquals: { [`kms:EncryptionContext:${MESSAGE_ID_KEY_PURPOSE.key}`]: MESSAGE_ID_KEY_PURPOSE.value } }]);
    const encrypts = grants.filter((g) => g.action === 'kms:Encrypt').map((g) => JSON.stringify(g.condition)).sort();
    expect(encrypts).toEqual(
      // Producer and push group secrets are sealed (put-producer / put-group and their rotations), never opened here.
      [MESSAGE_ID_KEY_PURPOSE, SECRET_CONTEXT_PURPOSE, PUSH_SECRET_CONTEXT_PURPOSE].map((p) => JSON.stringify({ StringEquals: { [`kms:EncryptionContext:${p.key}`]: p.value } })).sort(),
    );
  });

  it('gives the stack outputs ApiUrl and ReceiveUrl (the two function URLs), ApiInvokeArn and ReceiveInvokeArn (their functions)', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    expect(Object.keys(outputs).sort()).toEqual(['ApiInvokeArn', 'ApiUrl', 'CheckDeadLetterQueueUrl', 'DelayDeadLetterQueueUrl', 'ReceiveInvokeArn', 'ReceiveUrl', 'ScheduleGroupName']);
    const urlOf = (fnId: string) => Object.entries(resourcesOf(template, 'AWS::Lambda::Url')).find(([, u]) => JSON.stringify(u.Properties?.TargetFunctionArn) === JSON.stringify(getAtt(fnId)))?.[0] ?? '';
    expect(outputs.ApiUrl?.Value).toEqual(getAtt(urlOf(apiId), 'FunctionUrl'));
    expect(outputs.ReceiveUrl?.Value).toEqual(getAtt(urlOf(receiveId), 'FunctionUrl'));
    expect(outputs.ReceiveUrl?.Description).toMatch(/SLUICE_RECEIVE_ENDPOINT/);
    expect(outputs.ReceiveInvokeArn?.Value).toEqual(getAtt(receiveId));
    expect(outputs.ApiUrl?.Description).toMatch(/service lambda/);
    expect(outputs.ApiInvokeArn?.Value).toEqual(getAtt(apiId));
    expect(built.stateless.service.signingService).toBe('lambda');
  });

  it('watches 5xx answers of the function URL (Url5xxCount) besides errors and throttles', () => {
    const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).filter(
      (a) => JSON.stringify(a.Properties?.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: apiId } }]),
    );
    expect(alarms.map((a) => a.Properties?.MetricName).sort()).toEqual(['Errors', 'Throttles', 'Url5xxCount']);
    expect(alarms.find((a) => a.Properties?.MetricName === 'Url5xxCount')?.Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Threshold: 1,
      AlarmActions: [alarmTopicArn],
    });
  });
});

describe('grantInvoke', () => {
  const oneStack = (entryPoint?: 'functionUrl' | 'httpApi') => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'UserStack');
    const service = new SluiceService(stack, 'Queue', entryPoint ? { entryPoint } : {});
    const caller = new Role(stack, 'Caller', { assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com') });
    return { stack, service, caller };
  };

  it('lets a caller invoke the two function URLs (AWS_IAM only) and their functions through them, nothing else', () => {
    const { stack, service, caller } = oneStack();
    service.grantInvoke(caller);
    const t = Template.fromStack(stack);
    const grants = roleGrants(t, stack.getLogicalId(caller.node.defaultChild as never));
    expect(grants).toEqual(
      [service.apiFunction!, service.receiveFunction!].flatMap((fn) => [
        { action: 'lambda:InvokeFunctionUrl', resource: getAtt(logicalIdOf(stack, fn)), condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } } },
        { action: 'lambda:InvokeFunction', resource: getAtt(logicalIdOf(stack, fn)), condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } },
      ]),
    );
    expect(service.receiveUrl).toBe(service.receiveFunctionUrl?.url);
  });

  it('grantConsume lets an SDK consumer receive and delete messages of the doorbell queues, on their prefix only', () => {
    const { stack, service, caller } = oneStack();
    service.grantConsume(caller);
    const grants = roleGrants(Template.fromStack(stack), stack.getLogicalId(caller.node.defaultChild as never));
    expect(grants.map((g) => g.action)).toEqual(['sqs:ReceiveMessage', 'sqs:DeleteMessage']);
    for (const g of grants) expect(JSON.stringify(g.resource)).toContain(`:${service.doorbellPrefix}-bell-*`);
    expect(service.doorbellPrefix.length).toBeLessThanOrEqual(40);
    expect(service.doorbellPrefix).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('puts a caller of another account in the function policy, still AWS_IAM only', () => {
    const { stack, service } = oneStack();
    service.grantInvoke(new AccountRootPrincipal());
    const permissions = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::Lambda::Permission')).map((p) => p.Properties);
    expect(permissions).toEqual(
      expect.arrayContaining([expect.objectContaining({ Action: 'lambda:InvokeFunctionUrl', FunctionUrlAuthType: 'AWS_IAM' })]),
    );
    expect(permissions.every((p) => p?.Principal !== '*')).toBe(true);
  });

  it('grants execute-api:Invoke on the HTTP API with entryPoint httpApi', () => {
    const { stack, service, caller } = oneStack('httpApi');
    service.grantInvoke(caller);
    const t = Template.fromStack(stack);
    const grants = roleGrants(t, stack.getLogicalId(caller.node.defaultChild as never));
    expect(grants.map((g) => g.action)).toEqual(['execute-api:Invoke']);
    expect(JSON.stringify(grants[0]?.resource)).toContain(':execute-api:');
    expect(service.signingService).toBe('execute-api');
    expect(Object.keys(resourcesOf(t, 'AWS::Lambda::Url'))).toEqual([]);
    // Receives go to the HTTP API, whose receive route runs the receive function (at 128 MB).
    expect(service.receiveUrl).toBe(service.url);
    expect(service.functions.get(RECEIVE_FUNCTION)?.handlerModule).toBe('api/receive');
  });
});
