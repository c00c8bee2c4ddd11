/** The stateful half: the table (and its key, if customer managed). Deployed rarely, retained by default. */
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { SluiceTable } from './sluice-table.js';

export interface SluiceStatefulStackProps extends StackProps {
  /** @default RemovalPolicy.RETAIN (table and key) */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Encrypt the table with a customer managed KMS key (rotated yearly) this stack creates.
   * @default false - the AWS managed key for DynamoDB
   */
  readonly customerManagedKey?: boolean;
}

export class SluiceStatefulStack extends Stack {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: SluiceStatefulStackProps = {}) {
    super(scope, id, { description: 'Sluice: the message table', ...props });
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const encryptionKey = props.customerManagedKey
      ? new Key(this, 'TableKey', { description: 'Sluice message table', enableKeyRotation: true, removalPolicy })
      : undefined;
    this.table = new SluiceTable(this, 'Messages', { removalPolicy, ...(encryptionKey ? { encryptionKey } : {}) }).table;
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }
}
