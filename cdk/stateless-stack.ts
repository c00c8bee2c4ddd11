/** The stateless half: functions, API and alarms, on the table of the stateful stack. */
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
    super(scope, id, { description: 'Sluice: functions, HTTP API and alarms', ...props });
    const { alarmTopicArn, ...serviceProps } = props;
    this.service = new SluiceService(this, 'Sluice', {
      ...serviceProps,
      ...(alarmTopicArn ? { alarmTopic: Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn) } : {}),
    });
    new CfnOutput(this, 'ApiUrl', { value: this.service.url, description: 'Base URL of the Sluice API (SigV4, service execute-api)' });
  }
}
