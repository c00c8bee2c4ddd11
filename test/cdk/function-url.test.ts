/**
 * The default entry point: every v1 route in one function (`api`) behind a Lambda function URL
 * with AWS_IAM auth — no HTTP API, no public invoke, callers granted through `grantInvoke`.
 * test/cdk/stacks.test.ts checks the per-route layout of `entryPoint: 'httpApi'`.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTION, SluiceService } from '../../cdk/index.js';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../cdk/sluice-function.js';
import { MESSAGE_ID_KEY_PURPOSE, PUSH_SECRET_CONTEXT_PURPOSE, SECRET_CONTEXT_PURPOSE } from '../../lib/adapters/aws/names.js';
import { Limits } from '../../lib/domain/model.js';
import { grantsOf, logicalIdOf, resourcesOf, roleGrants, sluiceApp } from './synth.js';

const alarmTopicArn = 'arn:aws:sns:eu-west-1:123456789012:sluice-alarms';
const background = ['timer-minute', 'timer-release', 'timer-sweep', 'check-sweep', 'check-worker', 'push-worker', 'group-metrics', 'dispatcher'];

let built: ReturnType<typeof sluiceApp>;
let template: Template;
let apiId: string;

beforeAll(() => {
  built = sluiceApp({ namePrefix: 'sluice-url', alarmTopicArn });
  template = Template.fromStack(built.stateless);
  const fn = built.stateless.service.functions.get(API_FUNCTION);
  if (!fn) throw new Error('no api function');
  apiId = logicalIdOf(built.stateless, fn);
});

const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });

describe('function URL entry point (default)', () => {
  it('is the default: one api function with one function URL, AWS_IAM auth, buffered (6 MB), no HTTP API', () => {
    expect(built.stateless.service.entryPoint).toBe('functionUrl');
    const urls = Object.values(resourcesOf(template, 'AWS::Lambda::Url'));
    expect(urls.map((u) => u.Properties)).toEqual([{ AuthType: 'AWS_IAM', TargetFunctionArn: getAtt(apiId) }]);
    for (const type of ['AWS::ApiGatewayV2::Api', 'AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Stage', 'AWS::ApiGatewayV2::Integration']) {
      expect({ type, count: Object.keys(resourcesOf(template, type)).length }).toEqual({ type, count: 0 });
    }
    expect([...built.stateless.service.functions.keys()].sort()).toEqual([API_FUNCTION, ...background].sort());
    expect(template.toJSON().Resources[apiId].Properties).toMatchObject({
      FunctionName: 'sluice-url-api',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
    });
    expect(built.stateless.service.functions.get(API_FUNCTION)?.handlerModule).toBe('api/function-url');
  });

  it('allows no public invoke: no resource-based permission on the api function at all', () => {
    const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter(
      (p) => JSON.stringify(p.Properties?.FunctionName) === JSON.stringify(getAtt(apiId)) || JSON.stringify(p.Properties?.FunctionName) === JSON.stringify({ Ref: apiId }),
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

  it('gives the stack outputs ApiUrl (the function URL) and ApiInvokeArn (the api function)', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    expect(Object.keys(outputs).sort()).toEqual(['ApiInvokeArn', 'ApiUrl', 'CheckDeadLetterQueueUrl', 'DelayDeadLetterQueueUrl', 'ScheduleGroupName']);
    const [urlId] = Object.keys(resourcesOf(template, 'AWS::Lambda::Url'));
    expect(outputs.ApiUrl?.Value).toEqual(getAtt(urlId ?? '', 'FunctionUrl'));
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

  it('lets a caller invoke the function URL (AWS_IAM only) and the function through it, nothing else', () => {
    const { stack, service, caller } = oneStack();
    service.grantInvoke(caller);
    const t = Template.fromStack(stack);
    const fnId = logicalIdOf(stack, service.apiFunction!);
    const grants = roleGrants(t, stack.getLogicalId(caller.node.defaultChild as never));
    expect(grants).toEqual([
      { action: 'lambda:InvokeFunctionUrl', resource: getAtt(fnId), condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } } },
      { action: 'lambda:InvokeFunction', resource: getAtt(fnId), condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } } },
    ]);
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
  });
});
