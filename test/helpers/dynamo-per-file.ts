/**
 * A setup file that gives each test file its own in-memory DynamoDB Local (the reliability suite and
 * the main suite's files that use tables; DYNAMODB_ENDPOINT points them all at one instance instead).
 * DynamoDB Local's GetRecords costs time in proportion to every stream record the instance holds —
 * of every table, deleted ones included, for 24 hours — and it answers one request at a time. A
 * shared instance that the crash and FIFO tests filled made every later stream read of the suite
 * take seconds and starved the load test (docs/reliability.md). The suite runs one file at a time,
 * so one more JVM per file costs a few seconds and keeps each file's figures its own. The JVM runs
 * without the C2 compiler (SHORT_LIVED_JAVA_OPTIONS): half the CPU, for starting and for serving.
 */
import { afterAll, beforeAll } from 'vitest';
import { SHORT_LIVED_JAVA_OPTIONS, startDynamoLocal, type LocalDynamo } from '../../local/dynamo.js';
import { PER_FILE_ENDPOINT } from './dynamo-endpoint.js';

let dynamo: LocalDynamo | undefined;

beforeAll(async () => {
  const shared = process.env.DYNAMODB_ENDPOINT;
  if (!shared) dynamo = await startDynamoLocal({ javaOptions: SHORT_LIVED_JAVA_OPTIONS });
  process.env[PER_FILE_ENDPOINT] = shared || dynamo!.endpoint;
}, 120_000);

afterAll(async () => {
  delete process.env[PER_FILE_ENDPOINT];
  await dynamo?.stop();
});
