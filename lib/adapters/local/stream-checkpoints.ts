/**
 * Where the local stream poller remembers how far it got in each shard, as
 * Lambda's event source mapping does on AWS: in memory (tests, a runtime
 * whose DynamoDB Local keeps its data in memory — its stream goes with it),
 * or in a JSON file beside the data, so a restarted `npm start` resumes after
 * the last record it handled instead of replaying the stream's 24 hours.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** How far a shard was handled: its last handled record, or all of it (a closed shard read to its end). */
export interface ShardCheckpoint {
  sequenceNumber?: string;
  done?: boolean;
}

export interface CheckpointStore {
  /** The checkpoints saved for `streamArn` (none for another stream: a new stream starts afresh). */
  load(streamArn: string): Promise<Record<string, ShardCheckpoint>>;
  /** Saves every shard's checkpoint of `streamArn` (shards not listed are forgotten). */
  save(streamArn: string, shards: Record<string, ShardCheckpoint>): Promise<void>;
}

export class MemoryCheckpoints implements CheckpointStore {
  private saved: { streamArn: string; shards: Record<string, ShardCheckpoint> } | undefined;

  async load(streamArn: string): Promise<Record<string, ShardCheckpoint>> {
    return this.saved?.streamArn === streamArn ? structuredClone(this.saved.shards) : {};
  }

  async save(streamArn: string, shards: Record<string, ShardCheckpoint>): Promise<void> {
    this.saved = { streamArn, shards: structuredClone(shards) };
  }
}

/** One small JSON file, replaced whole on every save (write to a temporary file, then rename). */
export class FileCheckpoints implements CheckpointStore {
  constructor(private readonly file: string) {}

  async load(streamArn: string): Promise<Record<string, ShardCheckpoint>> {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    let saved: { streamArn?: string; shards?: Record<string, ShardCheckpoint> };
    try {
      saved = JSON.parse(text) as typeof saved;
    } catch {
      // Unreadable (it is replaced whole, so this takes a damaged disk): start over from the
      // starting position; the dispatcher's routes are idempotent, a replay only repeats work.
      return {};
    }
    return saved.streamArn === streamArn ? (saved.shards ?? {}) : {};
  }

  async save(streamArn: string, shards: Record<string, ShardCheckpoint>): Promise<void> {
    mkdirSync(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.tmp`;
    writeFileSync(temporary, JSON.stringify({ streamArn, shards }));
    renameSync(temporary, this.file);
  }
}
