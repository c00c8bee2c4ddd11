/**
 * Per consumer group metrics on AWS (issue 17 item 7): one scheduled function, read-only on the
 * table, and the construct helpers users alarm with.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { GROUP_METRICS, TOPIC_METRICS } from '../../lib/adapters/aws/names.js';
import { logicalIdOf, resourcesOf, roleGrants, sluiceApp } from './synth.js';

let stateless: Template;
let alarmLogicalId: string;
let pushAlarmLogicalId: string;
let contentionAlarmLogicalId: string;

beforeAll(() => {
  const built = sluiceApp({ namePrefix: 'gm', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' });
  const service = built.stateless.service;
  const alarm = service.alarmOnOldestMessage('billing.eu', 300);
  service.alarmOnOldestMessage('audit', 60, { evaluationPeriods: 2 });
  alarmLogicalId = built.stateless.getLogicalId(alarm.node.defaultChild as never);
  const pushAlarm = service.alarmOnPushFailures('hooks', { threshold: 3 });
  pushAlarmLogicalId = built.stateless.getLogicalId(pushAlarm.node.defaultChild as never);
  const contentionAlarm = service.alarmOnAppendContention('orders');
  contentionAlarmLogicalId = built.stateless.getLogicalId(contentionAlarm.node.defaultChild as never);
  expect(service.metricAppendLostRaces('orders').toMetricConfig().metricStat).toMatchObject({
    namespace: TOPIC_METRICS.namespace,
    metricName: 'AppendLostRaces',
    statistic: 'Sum',
    dimensions: [{ name: 'Topic', value: 'orders' }],
  });
  expect(service.metricAppends('orders').toMetricConfig().metricStat?.metricName).toBe('Appends');
  expect(service.metricAppendsThrottled('orders').toMetricConfig().metricStat?.metricName).toBe('AppendsThrottled');
  expect(service.metricPushFailures('hooks').toMetricConfig().metricStat).toMatchObject({ metricName: 'PushFailures', statistic: 'Sum', dimensions: [{ name: 'Group', value: 'hooks' }] });
  expect(service.metricBacklog('billing.eu').toMetricConfig().metricStat).toMatchObject({
    namespace: GROUP_METRICS.namespace,
    metricName: 'Backlog',
    dimensions: [{ name: 'Group', value: 'billing.eu' }],
    statistic: 'Maximum',
  });
  expect(service.metricInFlight('a').toMetricConfig().metricStat?.metricName).toBe('InFlight');
  expect(service.metricDeadLettered('a').toMetricConfig().metricStat?.metricName).toBe('DeadLettered');
  stateless = Template.fromStack(built.stateless);
});

describe('group metrics', () => {
  it('run as one function every minute, read-only on the table', () => {
    const functions = resourcesOf(stateless, 'AWS::Lambda::Function');
    const [id, fn] = Object.entries(functions).find(([, f]) => String(f.Properties?.Description ?? '').includes('CloudWatch metrics (EMF)')) ?? [];
    expect(fn?.Properties?.FunctionName).toBe('gm-group-metrics');
    const schedules = Object.values(resourcesOf(stateless, 'AWS::Scheduler::Schedule')).filter((s) => String(s.Properties?.Description ?? '').includes('group-metrics'));
    expect(schedules).toHaveLength(1);
    expect(schedules[0]?.Properties?.ScheduleExpression).toBe('rate(1 minute)');
    const role = (fn?.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const actions = new Set(roleGrants(stateless, role).map((g) => g.action));
    expect(actions.has('dynamodb:Query')).toBe(true);
    for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']) expect(actions.has(write)).toBe(false);
    // EMF goes through the function's log group: no cloudwatch:PutMetricData grant is needed.
    expect(actions.has('cloudwatch:PutMetricData')).toBe(false);
    expect(id).toBeDefined();
  });

  it('alarmOnOldestMessage watches the group’s oldest message age and notifies the alarm topic', () => {
    const alarm = stateless.toJSON().Resources[alarmLogicalId] as { Properties: Record<string, unknown> };
    expect(alarm.Properties).toMatchObject({
      AlarmName: 'gm-oldest-message-billing.eu',
      Namespace: 'Sluice',
      MetricName: 'OldestMessageAgeSeconds',
      Dimensions: [{ Name: 'Group', Value: 'billing.eu' }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 300,
      EvaluationPeriods: 5,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: ['arn:aws:sns:eu-west-1:123456789012:ops'],
    });
    const other = Object.values(resourcesOf(stateless, 'AWS::CloudWatch::Alarm')).find((a) => a.Properties?.AlarmName === 'gm-oldest-message-audit');
    expect(other?.Properties).toMatchObject({ Threshold: 60, EvaluationPeriods: 2 });
  });

  it('alarmOnAppendContention divides the topic’s lost races by its appends per 5 minutes, 3 periods, and notifies the alarm topic', () => {
    const alarm = stateless.toJSON().Resources[contentionAlarmLogicalId] as { Properties: Record<string, any> };
    expect(alarm.Properties).toMatchObject({
      AlarmName: 'gm-append-contention-orders',
      Threshold: 0.5,
      EvaluationPeriods: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: ['arn:aws:sns:eu-west-1:123456789012:ops'],
    });
    const queries = alarm.Properties.Metrics as Array<Record<string, any>>;
    expect(queries.find((q) => q.Expression !== undefined)).toMatchObject({ Expression: 'IF(lost >= 10, lost / (appends + 1), 0)', ReturnData: true });
    const stats = Object.fromEntries(queries.filter((q) => q.MetricStat).map((q) => [q.Id, q.MetricStat]));
    for (const [id, name] of [['lost', 'AppendLostRaces'], ['appends', 'Appends']]) {
      expect(stats[id!]).toMatchObject({
        Metric: { Namespace: 'Sluice', MetricName: name, Dimensions: [{ Name: 'Topic', Value: 'orders' }] },
        Period: 300,
        Stat: 'Sum',
      });
    }
  });

  it('alarmOnPushFailures sums the push group’s failed requests per 5 minutes and notifies the alarm topic', () => {
    const alarm = stateless.toJSON().Resources[pushAlarmLogicalId] as { Properties: Record<string, unknown> };
    expect(alarm.Properties).toMatchObject({
      AlarmName: 'gm-push-failures-hooks',
      Namespace: 'Sluice',
      MetricName: 'PushFailures',
      Dimensions: [{ Name: 'Group', Value: 'hooks' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 3,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: ['arn:aws:sns:eu-west-1:123456789012:ops'],
    });
  });
});
