/**
 * The single Sluice table. Every item has string keys `pk`/`sk`; one sparse
 * global secondary index `gsi1` (`g1pk`/`g1sk`) serves "due at" look-ups
 * (scheduled releases, transaction check-backs, ready FIFO shards). The
 * attribute `ttl` (epoch seconds) drives DynamoDB TTL. See docs/design.md.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

export const GSI1 = 'gsi1';
export const TTL_ATTRIBUTE = 'ttl';

export const tableDefinition = (tableName: string): CreateTableCommandInput => ({
  TableName: tableName,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'g1pk', AttributeType: 'S' },
    { AttributeName: 'g1sk', AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  GlobalSecondaryIndexes: [
    {
      IndexName: GSI1,
      KeySchema: [
        { AttributeName: 'g1pk', KeyType: 'HASH' },
        { AttributeName: 'g1sk', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    },
  ],
});

/** Creates the table if it does not exist (local runtime and tests; on AWS the CDK owns it). */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  } catch (error) {
    // Already enabled: DynamoDB answers ValidationException "TimeToLive is already enabled".
    if (!(error instanceof Error && /already enabled/i.test(error.message))) throw error;
  }
}
