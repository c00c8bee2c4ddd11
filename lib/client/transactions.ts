/**
 * `TransactionProducer`: RocketMQ-style transactional messages (SPEC §4).
 *
 * ```
 *  send half message ──▶ run the local transaction ──▶ commit   (callback resolved)
 *  (state: prepared,      (your database write)     └▶ rollback (callback threw, or returned 'rollback')
 *   invisible)                                      └▶ nothing  (returned 'unknown': the checker decides)
 * ```
 *
 * If the producer dies between the local transaction and the commit, Sluice
 * asks the producer group's checker (see `createCheckerHandler`) after
 * `checkAfterSeconds`; the checker looks at the local database and answers.
 */
import type { RequestOptions, SluiceClient } from './client.js';
import type { SendInput, SendResult } from './types.js';

/** What the local transaction decided; `void` means commit. */
export type LocalTransactionResult = 'commit' | 'rollback' | 'unknown' | void;

/** The half message, as the local transaction sees it: store `transactionId` with your data so the checker can find it. */
export interface HalfMessage {
  topic: string;
  messageId: string;
  transactionId: string;
}

export interface TransactionOutcome {
  topic: string;
  messageId: string;
  transactionId: string;
  /**
   * `committed` or `rolled-back` as resolved now; `unknown` when the callback
   * said so or when the resolution could not be delivered (`resolutionError`):
   * the checker resolves it later.
   */
  state: 'committed' | 'rolled-back' | 'unknown';
  /** FIFO: the message's place in its shard, once committed. */
  sequence?: number | undefined;
  /** Why the commit/rollback call failed, if it did (the check-back will resolve the transaction). */
  resolutionError?: unknown;
}

export interface TransactionProducerOptions {
  producerGroup: string;
  /** Seconds before Sluice starts checking an unresolved half message (1–3600, default 60 on the server). */
  checkAfterSeconds?: number;
}

type TransactionClient = Pick<SluiceClient, 'send' | 'commitTransaction' | 'rollbackTransaction'>;

export class TransactionProducer {
  readonly producerGroup: string;

  constructor(
    private readonly client: TransactionClient,
    private readonly options: TransactionProducerOptions,
  ) {
    this.producerGroup = options.producerGroup;
  }

  /** Sends a half message (state `prepared`): invisible to consumers until committed. */
  async prepare(topic: string, message: Omit<SendInput, 'transaction'>, options?: RequestOptions): Promise<HalfMessage & { result: SendResult }> {
    const result = await this.client.send(
      topic,
      {
        ...message,
        transaction: {
          producerGroup: this.producerGroup,
          ...(this.options.checkAfterSeconds !== undefined ? { checkAfterSeconds: this.options.checkAfterSeconds } : {}),
        },
      },
      options,
    );
    if (!result.transactionId) {
      throw new Error(`The server did not answer a transaction id for the half message ${result.messageId} (state ${result.state}).`);
    }
    return { topic, messageId: result.messageId, transactionId: result.transactionId, result };
  }

  /**
   * Sends a half message, runs `localTransaction`, then commits or rolls back.
   * If the callback throws, the message is rolled back and the error rethrown.
   */
  async send(
    topic: string,
    message: Omit<SendInput, 'transaction'>,
    localTransaction: (half: HalfMessage) => Promise<LocalTransactionResult> | LocalTransactionResult,
    options?: RequestOptions,
  ): Promise<TransactionOutcome> {
    const half = await this.prepare(topic, message, options);
    const base = { topic, messageId: half.messageId, transactionId: half.transactionId };
    let decision: LocalTransactionResult;
    try {
      decision = await localTransaction({ ...base });
    } catch (error) {
      // Best effort: if the rollback call fails too, the checker answers for it later.
      await this.client.rollbackTransaction(half.transactionId, options).catch(() => undefined);
      throw error;
    }
    if (decision === 'unknown') return { ...base, state: 'unknown' };
    try {
      if (decision === 'rollback') {
        await this.client.rollbackTransaction(half.transactionId, options);
        return { ...base, state: 'rolled-back' };
      }
      const committed = await this.client.commitTransaction(half.transactionId, options);
      return { ...base, state: 'committed', ...(committed.sequence !== undefined ? { sequence: committed.sequence } : {}) };
    } catch (error) {
      return { ...base, state: 'unknown', resolutionError: error };
    }
  }

  /** Commits a half message sent earlier. */
  commit(transactionId: string, options?: RequestOptions) {
    return this.client.commitTransaction(transactionId, options);
  }

  /** Rolls a half message back. */
  rollback(transactionId: string, options?: RequestOptions) {
    return this.client.rollbackTransaction(transactionId, options);
  }
}
