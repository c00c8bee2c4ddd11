/**
 * The stateful half: the table (and its key, if customer managed) and the key that seals
 * producer signing secrets stored in it. Deployed rarely, retained by default.
 */
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key, type IKey } from 'aws-cdk-lib/aws-kms';
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
  /** Seals producer signing secrets; the sealed secrets live in the table, so the key lives here too. */
  readonly secretsKey: IKey;

  constructor(scope: Construct, id: string, props: SluiceStatefulStackProps = {}) {
    super(scope, id, { description: 'Sluice: the message table and the key of producer signing secrets', ...props });
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const encryptionKey = props.customerManagedKey
      ? new Key(this, 'TableKey', { description: 'Sluice message table', enableKeyRotation: true, removalPolicy })
      : undefined;
    this.table = new SluiceTable(this, 'Messages', { removalPolicy, ...(encryptionKey ? { encryptionKey } : {}) }).table;
    this.secretsKey = new Key(this, 'SecretsKey', { description: 'Sluice: seals producer signing secrets', enableKeyRotation: true, removalPolicy });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SecretsKeyArn', { value: this.secretsKey.keyArn, description: 'KMS key sealing producer signing secrets' });
  }
}
