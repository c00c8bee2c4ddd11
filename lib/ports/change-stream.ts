/**
 * The table's change stream as a Lambda trigger sees it: the event a DynamoDB
 * Streams event source mapping invokes a function with, and the partial batch
 * response it understands. lib/ never imports Lambda event types, so the
 * shapes are declared here, member for member like `DynamoDBStreamEvent` and
 * `DynamoDBBatchResponse` of @types/aws-lambda (test/unit/change-stream.test.ts
 * proves at compile time that each is assignable to the other). The local
 * stream poller builds exactly these events from DynamoDB Local's stream.
 */

type Merge<T> = [{ [K in keyof T]: T[K] }][number];
type ExclusivePropertyUnion<T, P = keyof T> = P extends keyof T
  ? Merge<{ [K in Extract<keyof T, P>]: T[K] } & { [K in Exclude<keyof T, P>]?: never }>
  : never;

/**
 * An attribute value in DynamoDB's JSON wire format: one type key per value,
 * numbers as strings, binary as base64 strings (the Lambda event carries the
 * wire format, not the SDK's `Uint8Array`s).
 */
export type StreamAttributeValue = ExclusivePropertyUnion<{
  B: string;
  BOOL: boolean;
  BS: string[];
  L: StreamAttributeValue[];
  M: Record<string, StreamAttributeValue>;
  N: string;
  NS: string[];
  NULL: boolean;
  S: string;
  SS: string[];
}>;

/** The `dynamodb` part of a change record. */
export interface StreamChange {
  /** Epoch seconds. */
  ApproximateCreationDateTime?: number | undefined;
  Keys?: { [key: string]: StreamAttributeValue } | undefined;
  NewImage?: { [key: string]: StreamAttributeValue } | undefined;
  OldImage?: { [key: string]: StreamAttributeValue } | undefined;
  /** Orders the records of one shard; the `itemIdentifier` of a partial batch response. */
  SequenceNumber?: string | undefined;
  SizeBytes?: number | undefined;
  StreamViewType?: 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES' | undefined;
}

/** One change of one item. */
export interface ChangeRecord {
  awsRegion?: string | undefined;
  dynamodb?: StreamChange | undefined;
  eventID?: string | undefined;
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | undefined;
  eventSource?: string | undefined;
  eventSourceARN?: string | undefined;
  eventVersion?: string | undefined;
  // Present on TTL deletions only; its shape is DynamoDB's, untyped as in @types/aws-lambda.
  userIdentity?: any;
}

/** What a change-stream trigger is invoked with: the records of one shard, oldest first. */
export interface ChangeEvent {
  Records: ChangeRecord[];
}

/**
 * A partial batch response: the `SequenceNumber`s of the records that failed.
 * The event source checkpoints before the lowest one and retries from there.
 */
export interface ChangeBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** A change-stream trigger: the dispatcher Lambda's handler, or anything with its signature. */
export type ChangeHandler = (event: ChangeEvent) => Promise<ChangeBatchResponse | void>;
