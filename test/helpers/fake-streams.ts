/**
 * An in-memory DynamoDB Streams API for the poller's unit tests: shards with
 * parents, closing shards (GetRecords of a closed shard read to its end
 * answers no NextShardIterator), paged DescribeStream, iterators of every
 * type, and failures on demand. DynamoDB Local rolls shards only every 4 hours,
 * so shard lineage is played here (the behaviour follows the DynamoDB Streams
 * API reference: DescribeStream, GetShardIterator, GetRecords).
 */
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { StreamsApi } from '../../lib/adapters/local/stream-poller.js';

interface FakeShard {
  id: string;
  parent: string | undefined;
  records: _Record[];
  closed: boolean;
}

export class FakeStreams implements StreamsApi {
  readonly arn = 'arn:aws:dynamodb:ddblocal:000000000000:table/fake/stream/2026-11-30T00:00:00.000';
  readonly shards: FakeShard[] = [];
  /** DescribeStream answers this many shards a page. */
  pageSize = 2;
  calls = { describeStream: 0, getShardIterator: 0, getRecords: 0 };
  /** Fails the next N GetRecords calls (e.g. a DynamoDB Local restart). */
  failGetRecords = 0;
  /** How long each GetRecords takes (DynamoDB Local holding many stream records is slow). */
  getRecordsMs = 0;
  private sequence = 0;

  addShard(id: string, parent?: string): void {
    this.shards.push({ id, parent, records: [], closed: false });
  }

  close(id: string): void {
    this.shard(id).closed = true;
  }

  /** Appends an INSERT of `image` (wire format) to a shard; returns its sequence number. */
  put(shardId: string, image: Record<string, { S?: string; N?: string }>): string {
    const shard = this.shard(shardId);
    if (shard.closed) throw new Error(`shard ${shardId} is closed`);
    const SequenceNumber = String(++this.sequence).padStart(21, '0');
    shard.records.push({
      eventID: `e${this.sequence}`,
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'ddblocal',
      dynamodb: {
        ApproximateCreationDateTime: new Date(),
        Keys: { pk: image.pk as never, sk: image.sk as never },
        NewImage: image as never,
        SequenceNumber,
        SizeBytes: 50,
        StreamViewType: 'NEW_IMAGE',
      },
    });
    return SequenceNumber;
  }

  private shard(id: string): FakeShard {
    const shard = this.shards.find((s) => s.id === id);
    if (!shard) throw new Error(`no shard ${id}`);
    return shard;
  }

  async describeStream(input: { StreamArn?: string; ExclusiveStartShardId?: string }) {
    this.calls.describeStream++;
    const start = input.ExclusiveStartShardId ? this.shards.findIndex((s) => s.id === input.ExclusiveStartShardId) + 1 : 0;
    const page = this.shards.slice(start, start + this.pageSize);
    const more = start + this.pageSize < this.shards.length;
    return {
      StreamDescription: {
        StreamArn: this.arn,
        StreamStatus: 'ENABLED' as const,
        Shards: page.map((s) => ({
          ShardId: s.id,
          ...(s.parent ? { ParentShardId: s.parent } : {}),
          SequenceNumberRange: {
            StartingSequenceNumber: s.records[0]?.dynamodb?.SequenceNumber ?? '0',
            ...(s.closed ? { EndingSequenceNumber: s.records[s.records.length - 1]?.dynamodb?.SequenceNumber ?? '0' } : {}),
          },
        })),
        ...(more ? { LastEvaluatedShardId: page[page.length - 1]?.id } : {}),
      },
    };
  }

  async getShardIterator(input: { ShardId?: string; ShardIteratorType?: string; SequenceNumber?: string }) {
    this.calls.getShardIterator++;
    const shard = this.shard(input.ShardId ?? '');
    let index = 0;
    if (input.ShardIteratorType === 'LATEST') index = shard.records.length;
    if (input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER') index = shard.records.findIndex((r) => r.dynamodb?.SequenceNumber === input.SequenceNumber) + 1;
    if (input.ShardIteratorType === 'AT_SEQUENCE_NUMBER') index = shard.records.findIndex((r) => r.dynamodb?.SequenceNumber === input.SequenceNumber);
    return { ShardIterator: `${shard.id}|${index}` };
  }

  async getRecords(input: { ShardIterator?: string; Limit?: number }) {
    this.calls.getRecords++;
    if (this.getRecordsMs > 0) await new Promise((resolve) => setTimeout(resolve, this.getRecordsMs));
    if (this.failGetRecords > 0) {
      this.failGetRecords--;
      throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'Error' });
    }
    const [id, at] = (input.ShardIterator ?? '').split('|');
    const shard = this.shard(id ?? '');
    const index = Number(at);
    const records = shard.records.slice(index, index + (input.Limit ?? 1000));
    const next = index + records.length;
    const finished = shard.closed && next >= shard.records.length;
    return { Records: records, ...(finished ? {} : { NextShardIterator: `${shard.id}|${next}` }) };
  }
}

/** A wire-format segment image, flagged with `w` unless `flags` says otherwise. */
export const segmentImage = (topic: string, seq: number, flags: Record<string, { N: string }> = { w: { N: '1' } }) => ({
  pk: { S: `S#t:${topic}/p:0` },
  sk: { S: String(seq).padStart(16, '0') },
  n: { N: '1' },
  ...flags,
});

/** Waits until `condition()` holds (polling every 5 ms), or fails after `ms`. */
export async function eventually(condition: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
