/**
 * The change-record shapes: lib's declaration of the Lambda stream event is
 * the one of @types/aws-lambda (checked by the compiler), and the poller's
 * mapping of an SDK GetRecords record gives the record Lambda delivers
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html: creation time
 * in epoch seconds, wire-format attribute values, `eventSourceARN`).
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import type { ChangeBatchResponse, ChangeEvent, ChangeHandler } from '../../lib/ports/change-stream.js';
import { changeRecordOf, imageOf } from '../../lib/adapters/dynamodb/stream-records.js';
import { segmentChangeOf } from '../../lib/adapters/dynamodb/segment-changes.js';

// Compile-time proof that the two declarations are the same shape, both ways.
const toLambda = (event: ChangeEvent): DynamoDBStreamEvent => event;
const fromLambda = (event: DynamoDBStreamEvent): ChangeEvent => event;
const responseToLambda = (response: ChangeBatchResponse): DynamoDBBatchResponse => response;
const responseFromLambda = (response: DynamoDBBatchResponse): ChangeBatchResponse => response;
const lambdaHandlerIsAChangeHandler = (handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>): ChangeHandler => handler;
void [toLambda, fromLambda, responseToLambda, responseFromLambda, lambdaHandlerIsAChangeHandler];

const ARN = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-11-30T18:20:41.725';
const body = Uint8Array.from([0, 1, 2, 250, 255]);

const sdkRecord: _Record = {
  eventID: 'd11013b6-3c82-48b6-8345-2d7c0e57a8f7',
  eventName: 'INSERT',
  eventVersion: '1.1',
  eventSource: 'aws:dynamodb',
  awsRegion: 'ddblocal',
  dynamodb: {
    ApproximateCreationDateTime: new Date('2026-11-30T18:20:41.900Z'),
    Keys: { pk: { S: 'S#t:orders/p:2' }, sk: { S: '0000000000000041' } },
    NewImage: {
      pk: { S: 'S#t:orders/p:2' },
      sk: { S: '0000000000000041' },
      n: { N: '2' },
      w: { N: '1' },
      m: {
        L: [
          { M: { i: { S: 'm1' }, t: { S: 'orders' }, z: { B: body }, s: { N: '1764526841000' } } },
          { M: { i: { S: 'm2' }, t: { S: 'orders' }, b: { S: 'hi' }, k: { SS: ['a', 'b'] } } },
        ],
      },
      ok: { BOOL: true },
      none: { NULL: true },
      bs: { BS: [body] },
      ns: { NS: ['1', '2.5'] },
      // What the Streams client makes of an empty map (`{"M":{}}` on the wire).
      dn: {} as never,
      empty: { L: [] },
    },
    SequenceNumber: '000000000000000000041',
    SizeBytes: 160,
    StreamViewType: 'NEW_IMAGE',
  },
};

describe('change records as Lambda delivers them', () => {
  it('maps an SDK record to the Lambda event record', () => {
    const record = changeRecordOf(sdkRecord, ARN);
    expect(JSON.parse(JSON.stringify(record))).toEqual({
      eventID: 'd11013b6-3c82-48b6-8345-2d7c0e57a8f7',
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'ddblocal',
      dynamodb: {
        ApproximateCreationDateTime: 1796062841,
        Keys: { pk: { S: 'S#t:orders/p:2' }, sk: { S: '0000000000000041' } },
        NewImage: {
          pk: { S: 'S#t:orders/p:2' },
          sk: { S: '0000000000000041' },
          n: { N: '2' },
          w: { N: '1' },
          m: {
            L: [
              { M: { i: { S: 'm1' }, t: { S: 'orders' }, z: { B: 'AAEC+v8=' }, s: { N: '1764526841000' } } },
              { M: { i: { S: 'm2' }, t: { S: 'orders' }, b: { S: 'hi' }, k: { SS: ['a', 'b'] } } },
            ],
          },
          ok: { BOOL: true },
          none: { NULL: true },
          bs: { BS: ['AAEC+v8='] },
          ns: { NS: ['1', '2.5'] },
          dn: { M: {} },
          empty: { L: [] },
        },
        SequenceNumber: '000000000000000000041',
        SizeBytes: 160,
        StreamViewType: 'NEW_IMAGE',
      },
      eventSourceARN: ARN,
    });
  });

  it('carries the identity of TTL deletions as Lambda spells it', () => {
    const record = changeRecordOf({ ...sdkRecord, eventName: 'REMOVE', userIdentity: { Type: 'Service', PrincipalId: 'dynamodb.amazonaws.com' } }, ARN);
    expect(record.userIdentity).toEqual({ type: 'Service', principalId: 'dynamodb.amazonaws.com' });
    expect(changeRecordOf(sdkRecord, ARN)).not.toHaveProperty('userIdentity');
  });

  it('reads images back as the document client would (numbers, binary, sets)', () => {
    const image = imageOf(changeRecordOf(sdkRecord, ARN).dynamodb?.NewImage);
    expect(image?.n).toBe(2);
    expect(Buffer.from((image?.m as Array<{ z: Uint8Array }>)[0]?.z ?? [])).toEqual(Buffer.from(body));
    expect((image?.m as Array<{ k?: Set<string> }>)[1]?.k).toEqual(new Set(['a', 'b']));
    expect(image?.none).toBeNull();
    expect(imageOf(undefined)).toBeUndefined();
  });

  it('reads a segment insert: stream, sequence numbers, distinct topics and flags', () => {
    expect(segmentChangeOf(changeRecordOf(sdkRecord, ARN))).toEqual({
      id: '000000000000000000041',
      stream: 't:orders/p:2',
      seq: 41,
      count: 2,
      topics: ['orders'],
      noticeLane: undefined,
      wake: true,
    });
  });

  it('reads nothing from what is not a segment insert', () => {
    const withImage = (pk: string, sk: string, eventName: _Record['eventName'] = 'INSERT') =>
      changeRecordOf({ ...sdkRecord, eventName, dynamodb: { ...sdkRecord.dynamodb, NewImage: { pk: { S: pk }, sk: { S: sk }, nf: { N: '1' } } } }, ARN);
    expect(segmentChangeOf(withImage('S#t:a/k:x', '#'))).toBeUndefined();
    expect(segmentChangeOf(withImage('C#g', 't:a/p:0'))).toBeUndefined();
    expect(segmentChangeOf(withImage('S#t:a/k:x', '0000000000000001', 'MODIFY'))).toBeUndefined();
    expect(segmentChangeOf(withImage('S#t:a/k:x', '0000000000000001'))).toMatchObject({ noticeLane: 1, wake: false, topics: [] });
  });
});
