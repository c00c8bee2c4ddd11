/**
 * The single Sluice table. Every item has string keys `pk`/`sk`; one sparse
 * global secondary index `gsi1` (`g1pk`/`g1sk`) serves "due at" look-ups
 * (scheduled releases, transaction check-backs, ready FIFO shards). The
 * attribute `ttl` (epoch seconds) drives DynamoDB TTL. Its stream (new
 * images) feeds the dispatcher. See docs/design.md.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

export const GSI1 = 'gsi1';
export const TTL_ATTRIBUTE = 'ttl';
/** The dispatcher reads inserted items whole: new images only (docs/design.md, "The dispatcher"). */
export const STREAM_VIEW_TYPE = 'NEW_IMAGE';

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
  StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE },
});

/** Creates the table if it does not exist (local runtime and tests; on AWS the CDK owns it). */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await enableStream(client, tableName);
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

async function untilActive(client: DynamoDBClient, tableName: string) {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return Table;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

/** Tables created before the dispatcher existed (kept local data) get their stream now. */
async function enableStream(client: DynamoDBClient, tableName: string): Promise<void> {
  const table = await untilActive(client, tableName);
  const stream = table?.StreamSpecification;
  if (stream?.StreamEnabled && stream.StreamViewType === STREAM_VIEW_TYPE) return;
  if (stream?.StreamEnabled) {
    throw new Error(`Table ${tableName} has a ${stream.StreamViewType} stream; Sluice needs ${STREAM_VIEW_TYPE} (disable the stream to let Sluice enable its own).`);
  }
  try {
    await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }));
  } catch (error) {
    // Another process enabled it meanwhile: ValidationException "Table already has an enabled stream".
    if (!(error instanceof Error && /already has an enabled stream/i.test(error.message))) throw error;
  }
  await untilActive(client, tableName);
}

/** The ARN of the table's current stream (what the dispatcher's event source reads). */
export async function latestStreamArn(client: DynamoDBClient, tableName: string): Promise<string> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (!Table?.LatestStreamArn || !Table.StreamSpecification?.StreamEnabled) throw new Error(`Table ${tableName} has no enabled stream`);
  return Table.LatestStreamArn;
}
