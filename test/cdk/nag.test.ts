import { App, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { SluiceService } from '../../cdk/index.js';
import { nagResourceName } from '../../cdk/background.js';
import { sluiceApp } from './synth.js';

/** cdk-nag 3 reports through CDK policy validation; `validateScope` runs the same rules directly. */
const findings = (app: App) =>
  new AwsSolutionsChecks(undefined, { verbose: true })
    .validateScope(app)
    .violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}: ${v.description}`);

describe('cdk-nag AwsSolutions', () => {
  it('finds no unacknowledged error or warning in the default deployment', () => {
    expect(findings(sluiceApp().app)).toEqual([]);
  });

  it('finds none with a customer managed key, a name prefix and an alarm topic either', () => {
    const { app } = sluiceApp({ customerManagedKey: true, namePrefix: 'nag', alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:alarms' });
    expect(findings(app)).toEqual([]);
  });

  it('finds none when SluiceService is used inside a single user stack', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new SluiceService(new Stack(app, 'UserStack'), 'Queue', { namePrefix: 'user' });
    expect(findings(app)).toEqual([]);
  });

  it('finds none with the HTTP API entry point either', () => {
    expect(findings(sluiceApp({ entryPoint: 'httpApi', namePrefix: 'nag' }).app)).toEqual([]);
  });

  it('finds none in a user stack bound to an account and region, without a name prefix', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new SluiceService(new Stack(app, 'UserStack', { env: { account: '123456789012', region: 'eu-west-1' } }), 'Queue');
    expect(findings(app)).toEqual([]);
  });

  it.each([
    // The function URL has no unauthenticated route; the HTTP API's GET /health is one (APIG4).
    ['functionUrl', []],
    ['httpApi', ['AwsSolutions-APIG4']],
  ] as const)('acknowledges only specific rules, each with a concrete reason (entry point %s)', (entryPoint, entryPointRules) => {
    const { app, stateless } = sluiceApp({ entryPoint });
    const group = stateless.service.scheduleGroup.scheduleGroupName;
    const tableStreams = nagResourceName(stateless.service.dispatcher.function, `${stateless.service.table.tableArn}/stream/*`);
    const acknowledged = app.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.entries(m.data as Record<string, string>));
    expect(acknowledged.length).toBeGreaterThan(0);
    const ids = new Set(acknowledged.map(([id]) => id.replace(/^annotation::/i, '')));
    expect([...ids].sort()).toEqual(
      [
        ...entryPointRules,
        'AwsSolutions-IAM5[Resource::*]',
        // CreateSchedule of the run-time minute schedules: one group, one name prefix.
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${group}/sluice-m*]`,
        'AwsSolutions-L1',
        // The dispatcher's on-failure queue is itself a dead-letter queue.
        'AwsSolutions-SQS3',
        // dynamodb:ListStreams of the dispatcher's event source, on the table's streams.
        `AwsSolutions-IAM5[Resource::${tableStreams}]`,
        // Pull groups' doorbell queues, created at run time: one name prefix.
        `AwsSolutions-IAM5[Resource::${nagResourceName(stateless.service, stateless.service.doorbellQueueArn)}]`,
      ].sort(),
    );
    for (const [, reason] of acknowledged) expect(reason.length).toBeGreaterThan(60);
  });
});
