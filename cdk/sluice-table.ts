/**
 * The single Sluice table, translated from `tableDefinition()` in
 * lib/adapters/dynamodb/table.ts so the deployed table and the one the local
 * runtime and the tests create cannot drift apart.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
  type Attribute,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { KeySchemaElement } from '@aws-sdk/client-dynamodb';
import { Construct } from 'constructs';
import { TTL_ATTRIBUTE, tableDefinition } from '../lib/adapters/dynamodb/table.js';

const definition = tableDefinition('sluice');

/** Names of the table's global secondary indexes (least-privilege grants name each one). */
export const sluiceIndexNames: readonly string[] = (definition.GlobalSecondaryIndexes ?? []).map((index) => {
  if (!index.IndexName) throw new Error('tableDefinition(): a global secondary index has no name');
  return index.IndexName;
});

const attributeTypes: Record<string, AttributeType> = { S: AttributeType.STRING, N: AttributeType.NUMBER, B: AttributeType.BINARY };

function attribute(name: string | undefined): Attribute {
  const declared = definition.AttributeDefinitions?.find((a) => a.AttributeName === name);
  const type = declared?.AttributeType === undefined ? undefined : attributeTypes[declared.AttributeType];
  if (!name || !type) throw new Error(`tableDefinition(): key attribute '${name}' has no attribute definition`);
  return { name, type };
}

function keys(schema: KeySchemaElement[] | undefined): { partitionKey: Attribute; sortKey?: Attribute } {
  const hash = schema?.find((k) => k.KeyType === 'HASH');
  const range = schema?.find((k) => k.KeyType === 'RANGE');
  return { partitionKey: attribute(hash?.AttributeName), ...(range ? { sortKey: attribute(range.AttributeName) } : {}) };
}

const streamViewTypes: Record<string, StreamViewType> = {
  NEW_IMAGE: StreamViewType.NEW_IMAGE,
  NEW_AND_OLD_IMAGES: StreamViewType.NEW_AND_OLD_IMAGES,
  OLD_IMAGE: StreamViewType.OLD_IMAGE,
  KEYS_ONLY: StreamViewType.KEYS_ONLY,
};

/** The stream of `tableDefinition()`: the dispatcher's event source (docs/design.md, "The dispatcher"). */
function streamViewType(): StreamViewType | undefined {
  const spec = definition.StreamSpecification;
  if (!spec?.StreamEnabled) return undefined;
  const type = spec.StreamViewType === undefined ? undefined : streamViewTypes[spec.StreamViewType];
  if (!type) throw new Error(`tableDefinition(): stream view type '${spec.StreamViewType}' is not supported`);
  return type;
}

const tableStream = streamViewType();

const projectionTypes: Record<string, ProjectionType> = {
  KEYS_ONLY: ProjectionType.KEYS_ONLY,
  INCLUDE: ProjectionType.INCLUDE,
  ALL: ProjectionType.ALL,
};

export interface SluiceTableProps {
  /**
   * What CloudFormation does with the table when it leaves the stack.
   * `RETAIN` also turns on deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * A customer managed KMS key for the table.
   * @default - encrypted with the AWS managed key for DynamoDB
   */
  readonly encryptionKey?: IKey;
}

/** On-demand, point-in-time recovery, TTL on `ttl`, a stream of new images, encrypted at rest; retained by default. */
export class SluiceTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: SluiceTableProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    if (definition.BillingMode !== 'PAY_PER_REQUEST') throw new Error('tableDefinition(): only on-demand billing is supported');
    // No physical name: a named table cannot be replaced, and functions learn the name from SLUICE_TABLE_NAME.
    this.table = new Table(this, 'Table', {
      ...keys(definition.KeySchema),
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      ...(tableStream ? { stream: tableStream } : {}),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(props.encryptionKey
        ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
        : { encryption: TableEncryption.AWS_MANAGED }),
      removalPolicy,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    });
    for (const index of definition.GlobalSecondaryIndexes ?? []) {
      const projectionType = projectionTypes[index.Projection?.ProjectionType ?? 'ALL'];
      if (!index.IndexName || !projectionType) throw new Error(`tableDefinition(): index '${index.IndexName}' is incomplete`);
      this.table.addGlobalSecondaryIndex({
        indexName: index.IndexName,
        ...keys(index.KeySchema),
        projectionType,
        ...(index.Projection?.NonKeyAttributes ? { nonKeyAttributes: index.Projection.NonKeyAttributes } : {}),
      });
    }
  }
}
