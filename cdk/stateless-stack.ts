/** The stateless half: functions, API, schedules, queues and alarms, on the table (and secrets key) of the stateful stack. */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { SluiceService, type SluiceServiceProps } from './sluice-service.js';

export interface SluiceStatelessStackProps extends StackProps, Omit<SluiceServiceProps, 'table' | 'removalPolicy' | 'encryptionKey' | 'alarmTopic'> {
  readonly table: ITable;
  /** An existing SNS topic every alarm notifies. @default - alarms without actions */
  readonly alarmTopicArn?: string;
}

export class SluiceStatelessStack extends Stack {
  readonly service: SluiceService;

  constructor(scope: Construct, id: string, props: SluiceStatelessStackProps) {
    super(scope, id, { description: 'Sluice: functions, API entry point, schedules, queues and alarms', ...props });
    const { alarmTopicArn, ...serviceProps } = props;
    this.service = new SluiceService(this, 'Sluice', {
      ...serviceProps,
      ...(alarmTopicArn ? { alarmTopic: Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn) } : {}),
    });
    const { service } = this;
    const viaUrl = service.entryPoint === 'functionUrl';
    new CfnOutput(this, 'ApiUrl', {
      value: service.url,
      description: `Base URL of the Sluice API (${viaUrl ? 'Lambda function URL' : 'HTTP API'}; SigV4, service ${service.signingService}): SLUICE_ENDPOINT / --endpoint`,
    });
    new CfnOutput(this, 'ApiInvokeArn', {
      value: service.invokeArn,
      description: viaUrl
        ? 'Resource for the lambda:InvokeFunctionUrl and lambda:InvokeFunction permissions of API callers (SluiceService.grantInvoke)'
        : 'Resource for the execute-api:Invoke permission of API callers (SluiceService.grantInvoke)',
    });
    new CfnOutput(this, 'ReceiveUrl', {
      value: service.receiveUrl,
      description: viaUrl
        ? "Base URL of the receive function's own function URL (128 MB; SigV4, service lambda): SLUICE_RECEIVE_ENDPOINT / --receive-endpoint / receiveEndpoint. ApiUrl answers receive too, at the api function's memory"
        : 'Base URL for receives: the HTTP API (its receive route runs its own 128 MB function)',
    });
    if (service.receiveFunction) {
      new CfnOutput(this, 'ReceiveInvokeArn', {
        value: service.receiveFunction.functionArn,
        description: 'Resource for the lambda:InvokeFunctionUrl and lambda:InvokeFunction permissions of consumers (SluiceService.grantInvoke grants both functions)',
      });
    }
    new CfnOutput(this, 'ScheduleGroupName', {
      value: this.service.scheduleGroup.scheduleGroupName,
      description: 'EventBridge Scheduler group of the timer schedules',
    });
    new CfnOutput(this, 'DelayDeadLetterQueueUrl', {
      value: this.service.delayQueue.deadLetterQueue.queueUrl,
      description: 'Wake-ups of scheduled messages that failed repeatedly',
    });
    new CfnOutput(this, 'CheckDeadLetterQueueUrl', {
      value: this.service.checkQueue.deadLetterQueue.queueUrl,
      description: 'Transaction check-backs that failed repeatedly',
    });
  }
}
