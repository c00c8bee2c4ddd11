/**
 * Building blocks of Sluice's background work: SQS work queues with their
 * dead-letter queues, and EventBridge Scheduler targets whose role may invoke
 * exactly one function.
 */
import { Duration, Stack, Token, type IResolvable } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISchedule, IScheduleGroup, IScheduleTarget, ScheduleTargetConfig } from 'aws-cdk-lib/aws-scheduler';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { WORK_QUEUE_MAX_RECEIVES } from '../lib/ports/work-queues.js';

export interface WorkQueueProps {
  /** Physical name of the queue (the DLQ adds `-dlq`). @default - generated */
  readonly queueName?: string;
  /** Must exceed the consuming function's timeout (AWS recommends six times it). */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the DLQ. @default 5 */
  readonly maxReceiveCount?: number;
  /** @default 4 days */
  readonly retentionPeriod?: Duration;
}

/** An SQS queue (SSE-SQS, TLS only) with a dead-letter queue that keeps failures 14 days. */
export class WorkQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      ...(props.queueName ? { queueName: `${props.queueName}-dlq` } : {}),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      ...(props.queueName ? { queueName: props.queueName } : {}),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: props.retentionPeriod ?? Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount ?? WORK_QUEUE_MAX_RECEIVES },
    });
  }
}

/**
 * A role that EventBridge Scheduler assumes, only for schedules of `group` in this account
 * (confused-deputy guard). Give it its one target with `allowInvoke`.
 */
export function schedulerRole(scope: Construct, id: string, group: IScheduleGroup, description: string): Role {
  return new Role(scope, id, {
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account, 'aws:SourceArn': group.scheduleGroupArn } },
    }),
    description,
  });
}

/** lambda:InvokeFunction on the function's unqualified ARN only (no versions or aliases). */
export function allowInvoke(role: IRole, fn: IFunction): void {
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
}

/**
 * Schedule target: invoke a function with an empty event through a role of its own (unlike
 * `aws-scheduler-targets.LambdaInvoke`, which also grants `<arn>:*`). A tick that cannot be
 * delivered within a minute is dropped: the next one does the same work.
 */
export class InvokeEveryTick implements IScheduleTarget {
  constructor(
    private readonly fn: IFunction,
    private readonly role: IRole,
  ) {}

  bind(_schedule: ISchedule): ScheduleTargetConfig {
    return { arn: this.fn.functionArn, role: this.role, retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 60 } };
  }
}

/**
 * How cdk-nag names a policy resource in a finding (`Resource::<this>`): references become
 * `<LogicalId>` / `<LogicalId.Attr>`, `Fn::Join` is joined. Lets an acknowledgement name the
 * one wildcard resource it accepts instead of the whole rule.
 */
export function nagResourceName(scope: Construct, arn: string): string {
  const visit = (node: unknown): string => {
    if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
    if (node && typeof node === 'object') {
      const n = node as Record<string, unknown>;
      if (Array.isArray(n['Fn::Join'])) {
        const [delimiter, items] = n['Fn::Join'] as [string, unknown[]];
        return items.map(visit).join(delimiter);
      }
      if (n['Fn::Sub'] !== undefined) return visit(n['Fn::Sub']);
      if (Array.isArray(n['Fn::GetAtt'])) {
        const [resource, attribute] = n['Fn::GetAtt'] as [unknown, unknown];
        return `<${visit(resource)}.${visit(attribute)}>`;
      }
      if (n.Ref !== undefined) return `<${visit(n.Ref)}>`;
    }
    return JSON.stringify(node);
  };
  return visit(Token.isUnresolved(arn) ? (Stack.of(scope).resolve(arn) as IResolvable | string) : arn);
}
