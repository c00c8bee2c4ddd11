/** Spawns one in-memory DynamoDB Local for the whole run; every test file creates its own table. */
import type { TestProject } from 'vitest/node';
import { SHORT_LIVED_JAVA_OPTIONS, startDynamoLocal, type LocalDynamo } from '../../local/dynamo.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

let dynamo: LocalDynamo | undefined;

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

export async function setup(project: TestProject) {
  const endpoint = process.env.DYNAMODB_ENDPOINT || (dynamo = await startDynamoLocal({ javaOptions: SHORT_LIVED_JAVA_OPTIONS })).endpoint;
  project.provide('dynamoEndpoint', endpoint);
}

export async function teardown() {
  await dynamo?.stop();
}
