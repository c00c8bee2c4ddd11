import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { SluiceService, TableAccess } from '../../cdk/index.js';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../cdk/sluice-function.js';
import { routes } from '../../functions/api/routes.js';
import { tableDefinition, TTL_ATTRIBUTE } from '../../lib/adapters/dynamodb/table.js';
import { Limits } from '../../lib/domain/model.js';
import { grantsOf, logicalIdOf, resourcesOf, sluiceApp } from './synth.js';

const alarmTopicArn = 'arn:aws:sns:eu-west-1:123456789012:sluice-alarms';
const writeActions: readonly string[] = TABLE_WRITE_ACTIONS;
const noTableAccess = new Set(['health', 'openapi']);

let built: ReturnType<typeof sluiceApp>;
let stateful: Template;
let stateless: Template;

beforeAll(() => {
  built = sluiceApp({ namePrefix: 'sluice-test', alarmTopicArn, logRetention: RetentionDays.TWO_WEEKS });
  stateful = Template.fromStack(built.stateful);
  stateless = Template.fromStack(built.stateless);
});

const functionId = (entry: string) => {
  const fn = built.stateless.service.functions.get(entry);
  if (!fn) throw new Error(`no function for route ${entry}`);
  return logicalIdOf(built.stateless, fn);
};

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
    const { stateful: keyStack, stateless: fnStack } = sluiceApp({ customerManagedKey: true });
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
    expect(Object.keys(resourcesOf(stateless, 'AWS::Lambda::Function'))).toHaveLength(routes.length);
    expect(new Set(routes.map((r) => functionId(r.entry))).size).toBe(routes.length);
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

  it('get the table name and the Powertools settings from the environment', () => {
    const tableArnOrName = Match.objectLike({ 'Fn::GetStackOutput': Match.objectLike({ StackName: built.stateful.stackName }) });
    for (const route of routes) {
      stateless.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `sluice-test-${route.entry}`,
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

  it('give the long poll of receive more time than its longest wait, within the HTTP API limit', () => {
    const receive = stateless.toJSON().Resources[functionId('receive')];
    expect(receive.Properties.Timeout).toBeGreaterThan(Limits.receiveMaxWaitSeconds);
    expect(receive.Properties.Timeout).toBeLessThan(30);
  });

  it('write to their own log group with the configured retention', () => {
    for (const route of routes) {
      const fn = stateless.toJSON().Resources[functionId(route.entry)];
      const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref as string;
      expect(stateless.toJSON().Resources[logGroupId]).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        Properties: { LogGroupName: `/aws/lambda/sluice-test-${route.entry}`, RetentionInDays: 14 },
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

  it('grants table actions on the table and its named index only, never on *', () => {
    for (const route of routes) {
      for (const grant of grantsOf(stateless, functionId(route.entry)).filter((g) => g.action.startsWith('dynamodb:'))) {
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

  it.each(routes)('watch errors and throttles of $entry', (route) => {
    for (const metric of ['Errors', 'Throttles']) {
      const [alarm, ...others] = alarmsOn(metric, 'FunctionName', functionId(route.entry));
      expect(others).toEqual([]);
      expect(alarm?.Properties).toMatchObject({ Namespace: 'AWS/Lambda', Threshold: 1, AlarmActions: [alarmTopicArn] });
    }
  });

  it('watch 5xx answers of the API', () => {
    const [apiId] = Object.keys(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api'));
    const [alarm] = alarmsOn('5xx', 'ApiId', apiId ?? '');
    expect(alarm?.Properties).toMatchObject({ Namespace: 'AWS/ApiGateway', Statistic: 'Sum', Threshold: 1, AlarmActions: [alarmTopicArn] });
  });
});

describe('SluiceService as an L3 construct in one stack', () => {
  const oneStack = () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'UserStack');
    return { stack, service: new SluiceService(stack, 'Queue') };
  };

  it('creates its own table and wires every function to it', () => {
    const { stack, service } = oneStack();
    const template = Template.fromStack(stack);
    const [tableId, ...more] = Object.keys(resourcesOf(template, 'AWS::DynamoDB::Table'));
    expect(more).toEqual([]);
    expect(service.functions.size).toBe(routes.length);
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SLUICE_TABLE_NAME: { Ref: tableId } }) },
    });
  });

  it('takes a further function with one call: role, log group, grants and two alarms', () => {
    const { stack, service } = oneStack();
    const counts = (t: Template) =>
      Object.fromEntries(
        ['AWS::Lambda::Function', 'AWS::IAM::Role', 'AWS::Logs::LogGroup', 'AWS::CloudWatch::Alarm'].map((type) => [type, Object.keys(t.findResources(type)).length]),
      );
    const fn = service.addFunction({ name: 'sweeper', handlerModule: 'api/health', tableAccess: TableAccess.READ_WRITE });
    const template = Template.fromStack(stack);
    expect(counts(template)).toEqual({
      'AWS::Lambda::Function': routes.length + 1,
      'AWS::IAM::Role': routes.length + 1,
      'AWS::Logs::LogGroup': routes.length + 2,
      'AWS::CloudWatch::Alarm': 2 * (routes.length + 1) + 1,
    });
    const actions = grantsOf(template, logicalIdOf(stack, fn)).map((g) => g.action);
    expect(actions).toEqual(expect.arrayContaining([...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS]));
    expect(() => service.addFunction({ name: 'sweeper', handlerModule: 'api/health', tableAccess: TableAccess.NONE })).toThrow(/already exists/);
  });
});
