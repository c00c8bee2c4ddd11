/**
 * Change records between their two spellings: what the DynamoDB Streams SDK
 * client returns from GetRecords (dates as `Date`, binary as `Uint8Array`)
 * and what Lambda hands a stream trigger (the wire JSON: creation time in
 * epoch seconds, binary as base64, plus `eventSourceARN`). The local poller
 * turns the first into the second, so the dispatcher sees on DynamoDB Local
 * exactly the records it sees on AWS; the dispatcher reads images back into
 * plain objects with the same marshalling rules the table's writers use.
 */
import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import type { AttributeValue as SdkStreamAttributeValue, _Record as SdkChangeRecord } from '@aws-sdk/client-dynamodb-streams';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { ChangeRecord, StreamAttributeValue } from '../../ports/change-stream.js';

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** An SDK attribute value in the wire format Lambda events carry. */
export function toWireValue(value: SdkStreamAttributeValue): StreamAttributeValue {
  if (value.B !== undefined) return { B: base64(value.B) };
  if (value.BS !== undefined) return { BS: value.BS.map(base64) };
  if (value.L !== undefined) return { L: value.L.map(toWireValue) };
  if (value.M !== undefined) return { M: toWireImage(value.M) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: [...value.SS] };
  if (value.NS !== undefined) return { NS: [...value.NS] };
  // The Streams client deserializes an empty map (`{"M":{}}` on the wire) to `{}`: DynamoDB has no
  // other value without a member (empty lists stay `{L: []}`, empty sets are not allowed).
  if (Object.keys(value).length === 0) return { M: {} };
  throw new TypeError(`unknown attribute value type: ${Object.keys(value).join(', ')}`);
}

function toWireImage(image: Record<string, SdkStreamAttributeValue>): Record<string, StreamAttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toWireValue(value)]));
}

/** A wire attribute value as the SDK spells it (binary decoded), for `unmarshall`. */
function fromWireValue(value: StreamAttributeValue): SdkAttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B, 'base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((b) => Buffer.from(b, 'base64')) };
  if (value.L !== undefined) return { L: value.L.map(fromWireValue) };
  if (value.M !== undefined) return { M: Object.fromEntries(Object.entries(value.M).map(([k, v]) => [k, fromWireValue(v)])) };
  return value as SdkAttributeValue;
}

/**
 * An image (`NewImage`, `OldImage`, `Keys`) of a change record as a plain
 * object: numbers as numbers, binary as `Uint8Array`, lists and maps as arrays
 * and objects — what the document client returns for the same item.
 */
export function imageOf(image: Record<string, StreamAttributeValue> | undefined): Record<string, unknown> | undefined {
  if (!image) return undefined;
  return unmarshall(Object.fromEntries(Object.entries(image).map(([name, value]) => [name, fromWireValue(value)])));
}

/**
 * The record as Lambda delivers it to a DynamoDB stream trigger: the same
 * fields, `ApproximateCreationDateTime` in epoch seconds, attribute values in
 * wire JSON, and `eventSourceARN` naming the stream.
 */
export function changeRecordOf(record: SdkChangeRecord, streamArn: string): ChangeRecord {
  const change = record.dynamodb;
  const out: ChangeRecord = {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource,
    awsRegion: record.awsRegion,
    dynamodb: change && {
      ...(change.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.floor(change.ApproximateCreationDateTime.getTime() / 1000) } : {}),
      ...(change.Keys ? { Keys: toWireImage(change.Keys) } : {}),
      ...(change.NewImage ? { NewImage: toWireImage(change.NewImage) } : {}),
      ...(change.OldImage ? { OldImage: toWireImage(change.OldImage) } : {}),
      SequenceNumber: change.SequenceNumber,
      SizeBytes: change.SizeBytes,
      StreamViewType: change.StreamViewType,
    },
    eventSourceARN: streamArn,
  };
  if (record.userIdentity) out.userIdentity = { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId };
  return out;
}
