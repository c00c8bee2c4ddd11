/**
 * Transactional messages (SPEC §3.1, §3.6, §4): producer groups and their
 * signing secrets, commit/rollback of half messages, and the check-back that
 * asks a producer's checker webhook about half messages left unresolved.
 *
 *   send{transaction} ─▶ X#id prepared (check-back index K#<0..3>, by next check time)
 *   commit  ─▶ standard: X prepared → committing (claim) ─▶ put segment ─▶ X → committed (mark)
 *              FIFO: TransactWrite[ append segment + notice, X: prepared → committed ]   (first resolution wins)
 *   rollback ─▶ X: prepared → rolled-back                                  (409 for the opposite)
 *   send / unknown check ─▶ arm the next check to the second (TimerService.armChecks)
 *   sweep (every minute, the safety net) ─▶ due half messages ─▶ dispatch (SQS / in-process, bounded)
 *   check ─▶ lease the check (nc moves, cc + 1, IF nc unchanged) ─▶ signed POST ─▶
 *            record it ─▶ commit | rollback | unknown (→ after maxChecks: onMaxChecks)
 *         ─▶ a committing half message (a commit's claim): finish it (claimed-release.ts)
 */
import {
  ProducerGroupNotFoundError,
  ProducerInUseError,
  TransactionAlreadyResolvedError,
  TransactionExpiredError,
  TransactionNotFoundError,
  InvalidArgumentError,
  UnavailableError,
} from '../domain/errors.js';
import { Limits, iso, messageContent, type CheckStatus, type OnMaxChecks, type ProducerGroup, type Topic } from '../domain/model.js';
import { assertCheckerUrl, type CheckerPolicy } from '../domain/ssrf.js';
import type { CheckRecord, Deferred } from '../adapters/dynamodb/deferred.js';
import type { StoredProducer } from '../adapters/dynamodb/producers.js';
import { secretContext } from '../adapters/aws/names.js';
import type { Clock } from '../ports/clock.js';
import type { Random } from '../ports/random.js';
import type { CheckDispatcher, SecretBox, WebhookClient } from '../ports/webhooks.js';
import type { Timers } from '../ports/timers.js';
import { CLAIM_GIVE_UP_MS, LEFT } from './claimed-release.js';
import type { DeferredReleaser } from './releaser.js';
import type { Stores } from './stores.js';
import { newSigningSecret as newSecret, openSigningSecrets, signedHeaders } from './webhook-signing.js';

export interface ProducerInput {
  checkerUrl: string;
  checkIntervalSeconds: number | undefined;
  maxChecks: number | undefined;
  onMaxChecks: OnMaxChecks | undefined;
}

export interface TransactionServiceOptions {
  policy: CheckerPolicy;
  checkTimeoutMs?: number;
  /** Logs what went wrong without secrets (the default says nothing). */
  log?: (message: string, details: Record<string, unknown>) => void;
  /** Arms each next check-back to the second (without: the check sweep finds them, once a minute). */
  timers?: Pick<Timers, 'armChecks'>;
  /** Waits (ms) for a check-back that arrived just before it was due. */
  wait?: (ms: number) => Promise<void>;
}

/** A check-back that arrives at most this early (clock skew between hosts) waits; earlier ones are stale and skipped. */
const CHECK_EARLY_WAIT_MS = 1500;
/** Reads of a half message one producer's commit makes (a claim under way is waited for between them). */
const COMMIT_ATTEMPTS = 5;
/** The first wait for a claim under way (doubling: 50 + 100 + 200 + 400 ms in all, real time). */
const COMMIT_WAIT_MS = 50;

/** Half messages one sweep reads per check-back index partition (the next sweep takes the rest). */
const CHECK_SWEEP_PAGE = 100;
/** How long check records stay readable (GET /v1/transactions/{id}). */
const CHECK_RECORD_KEEP_SECONDS = 30 * 86_400;

const txId = (id: string) => `t${id}`;
const idOf = (transactionId: string) => (/^t[0-9A-HJKMNP-TV-Z]{26}$/.test(transactionId) ? transactionId.slice(1) : undefined);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export const producerView = (p: ProducerGroup) => ({
  name: p.name,
  checkerUrl: p.checkerUrl,
  checkIntervalSeconds: p.checkIntervalSeconds,
  maxChecks: p.maxChecks,
  onMaxChecks: p.onMaxChecks,
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
  secretRotatedAt: iso(p.secretRotatedAt),
});

export class TransactionService {
  private readonly timeoutMs: number;

  constructor(
    private readonly stores: Stores,
    private readonly releaser: DeferredReleaser,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly webhooks: WebhookClient,
    private readonly secrets: SecretBox,
    private readonly dispatcher: CheckDispatcher,
    private readonly options: TransactionServiceOptions,
  ) {
    this.timeoutMs = options.checkTimeoutMs ?? Limits.checkTimeoutMs;
  }

  // ── producer groups ───────────────────────────────────────────────────

  /** Creates (answering the signing secret, once) or updates a producer group. */
  async putProducer(name: string, input: ProducerInput) {
    assertCheckerUrl(input.checkerUrl, this.options.policy);
    try {
      await this.webhooks.vet(input.checkerUrl);
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'refused';
      throw new InvalidArgumentError(`${reason}.`, { issues: [{ path: 'checkerUrl', message: reason }] });
    }
    const now = this.clock.now();
    const existing = await this.stores.producers.get(name);
    const settings = {
      checkerUrl: input.checkerUrl,
      checkIntervalSeconds: input.checkIntervalSeconds ?? existing?.checkIntervalSeconds ?? Limits.checkIntervalDefaultSeconds,
      maxChecks: input.maxChecks ?? existing?.maxChecks ?? Limits.maxChecksDefault,
      onMaxChecks: input.onMaxChecks ?? existing?.onMaxChecks ?? 'rollback',
    };
    if (!existing) {
      const secret = newSecret();
      const created = await this.stores.producers.create(name, settings, await this.secrets.seal(secret, secretContext(name)), now);
      if (created) return { ...producerView(created), signingSecret: secret };
    }
    return producerView(await this.stores.producers.update(name, settings, now));
  }

  async listProducers(limit: number, nextToken: string | undefined) {
    const page = await this.stores.producers.list(limit, nextToken);
    return { producers: page.items.map(producerView), nextToken: page.nextToken ?? null };
  }

  /**
   * Deletes a producer group, or 409 `ProducerInUse` while it has a half
   * message still prepared (waiting for check-backs, or kept after maxChecks):
   * the check-back would have no checker to ask. The look-up is a read of the
   * check-back index (`DeferredStore.hasUnresolvedHalf`), not a counter, so the
   * transactional send path writes nothing more; a half message sent while the
   * delete runs can escape it (the send does not re-read the group after its
   * Put), and its check-backs then count `unknown` until the producer resolves
   * it or maxChecks ends them with the default `onMaxChecks` (rollback).
   */
  async deleteProducer(name: string) {
    if (!(await this.stores.producers.get(name))) throw new ProducerGroupNotFoundError(name);
    if (await this.stores.deferred.hasUnresolvedHalf(name)) {
      throw new ProducerInUseError(`Producer group '${name}' has unresolved half messages; commit or roll them back first.`);
    }
    if (!(await this.stores.producers.delete(name))) throw new ProducerGroupNotFoundError(name);
  }

  async getProducer(name: string) {
    const producer = await this.stores.producers.get(name);
    if (!producer) throw new ProducerGroupNotFoundError(name);
    return producerView(producer);
  }

  /** Issues a new signing secret; the previous one keeps signing next to it for a day. */
  async rotateSecret(name: string) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const producer = await this.stores.producers.get(name);
      if (!producer) throw new ProducerGroupNotFoundError(name);
      const secret = newSecret();
      const now = this.clock.now();
      const sealed = await this.secrets.seal(secret, secretContext(name));
      // Right after another rotation (within one request's life): its retry, whose answer was lost —
      // the secret held before that one keeps signing next to the new one.
      const retried = producer.sealedPrevious !== undefined && (producer.previousUntil ?? 0) > now && now - producer.secretRotatedAt < Limits.secretRotationRetryMs;
      const previous = retried ? producer.sealedPrevious! : producer.sealedSecret;
      const until = retried ? producer.previousUntil! : now + Limits.secretRotationGraceSeconds * 1000;
      if (await this.stores.producers.rotate(name, producer.sealedSecret, sealed, until, now, previous)) {
        return { ...producerView({ ...producer, secretRotatedAt: now, updatedAt: now }), signingSecret: secret };
      }
    }
    throw new InvalidArgumentError('The secret was rotated concurrently; retry.');
  }

  // ── resolution ────────────────────────────────────────────────────────

  /**
   * Commits a half message (docs/design.md, Transactional messages: Commit).
   * FIFO topics: one transaction appends it and marks it committed. Standard
   * topics: claim (`committing`: the commit wins here), segment put, mark
   * (releaser.commitClaimed); a half message found `committing` — a commit
   * under way, or one a crash left — is finished the same way. The answer
   * waits for the mark: a claim that another commit holds and may still be
   * finishing is waited for briefly, then answered 503 (retry), with a
   * check-back armed for when the claim may be taken over (the worker
   * finishes it should its claimant be gone).
   */
  async commit(transactionId: string, by: 'producer' | 'check' | 'onMaxChecks' = 'producer') {
    const answer = await this.commitOrLeave(transactionId, by, COMMIT_ATTEMPTS);
    if (answer !== LEFT) return answer;
    // Retry-After: until the claim may be taken over (its claimant gave up), so the SDK's own retry finishes it.
    const claimedAt = (await this.stores.deferred.get(idOf(transactionId) ?? ''))?.claim?.at;
    const waitSeconds = claimedAt === undefined ? 1 : Math.ceil((claimedAt + CLAIM_GIVE_UP_MS - this.clock.now()) / 1000);
    throw new UnavailableError(`Transaction '${transactionId}' is being committed; retry to get its answer.`, Math.min(20, Math.max(1, waitSeconds)));
  }

  /** {@link commit}, answering {@link LEFT} for a claim under way that is not this call's to finish yet (a check-back is armed for it). */
  private async commitOrLeave(transactionId: string, by: string, attempts: number) {
    for (let attempt = 0; ; attempt++) {
      const half = await this.require(transactionId);
      if (half.state === 'committed') return this.committedView(half, half.address?.seq);
      if (half.state === 'expired') throw this.expired(transactionId, half);
      if (half.state !== 'prepared' && half.state !== 'committing') {
        throw new TransactionAlreadyResolvedError(`Transaction '${transactionId}' was rolled back; it cannot be committed.`);
      }
      if (attempt === attempts) break; // read once more after an attempt resolved meanwhile: answered from what it is
      const topic = await this.stores.catalog.topic(half.topic);
      if (half.state === 'prepared' && (!topic || topic.generation !== half.record.generation)) {
        throw new TransactionNotFoundError(`Transaction '${transactionId}' refers to a topic that no longer exists.`);
      }
      const landed = await this.append(half, topic, by);
      if (landed === LEFT) {
        if (attempt === attempts - 1) break;
        await sleep(COMMIT_WAIT_MS * 2 ** attempt);
      } else if (landed !== undefined) return this.committedView(half, landed.seq, topic);
      // Undefined: resolved meanwhile (perhaps just now, by a racing check): read again and answer from what it is.
    }
    await this.options.timers?.armChecks([{ transactionId, at: this.clock.now() + CLAIM_GIVE_UP_MS }]);
    return LEFT;
  }

  /** One attempt to append a prepared (or finish a committing) half message: where it landed, undefined (resolved meanwhile), or LEFT. */
  private async append(half: Deferred, topic: Topic | undefined, by: string): Promise<{ seq: number } | undefined | typeof LEFT> {
    if (half.state === 'committing' || topic?.type !== 'fifo') return this.releaser.commitClaimed(half, by);
    // FIFO topics keep the transaction: their notice must enter with their segment.
    const { landed, failed } = await this.releaser.append([half], (d, address) => this.stores.deferred.commitItem(d.id, address, by, this.clock.now()));
    if (failed.has(half.id)) throw failed.get(half.id);
    return landed.get(half.id);
  }

  async rollback(transactionId: string, by: 'producer' | 'check' | 'onMaxChecks' = 'producer') {
    const half = await this.require(transactionId);
    if (half.state === 'prepared' && (await this.stores.deferred.rollback(half.id, by, this.clock.now()))) {
      return { state: 'rolled-back' as const };
    }
    const current = await this.require(transactionId);
    if (current.state === 'rolled-back') return { state: 'rolled-back' as const };
    const expired = current.state === 'expired' ? ' (its message then expired before its append was confirmed)' : '';
    throw new TransactionAlreadyResolvedError(`Transaction '${transactionId}' was committed${expired}; it cannot be rolled back.`);
  }

  async get(transactionId: string) {
    const half = await this.require(transactionId);
    const tx = half.transaction;
    const topic = await this.stores.catalog.getTopic(half.topic);
    const checks = await this.stores.deferred.checks(half.id);
    return {
      transactionId,
      // Committing: the commit won at its claim (a rollback answers 409); the message query says `prepared` until it is marked.
      state: half.state === 'committing' ? ('committed' as const) : half.state,
      producerGroup: tx?.producerGroup ?? null,
      topic: half.topic,
      messageId: half.record.messageId,
      sequence: topic?.type === 'fifo' && half.address ? half.address.seq : null,
      sentAt: iso(half.record.sentAt),
      checkAfterSeconds: tx?.checkAfterSeconds ?? null,
      nextCheckAt: half.state === 'prepared' && tx?.nextCheckAt !== undefined ? iso(tx.nextCheckAt) : null,
      checkCount: tx?.checkCount ?? 0,
      // Only a resolution has an author and a time: a kept half message is still prepared
      // (items kept before `ks` existed carry rb = onMaxChecks; it is not shown either).
      resolvedBy: half.state === 'prepared' ? null : (tx?.resolvedBy ?? null),
      resolvedAt: half.state === 'prepared' || tx?.resolvedAt === undefined ? null : iso(tx.resolvedAt),
      checks: checks.map((c) => ({
        checkCount: c.n,
        at: iso(c.at),
        status: c.status,
        httpStatus: c.httpStatus,
        error: c.error,
        latencyMs: c.latencyMs,
      })),
    };
  }

  // ── check-back ────────────────────────────────────────────────────────

  /** The recurring sweep: hands every half message due for a check to the workers. */
  async sweep(): Promise<number> {
    const ids = await this.stores.deferred.dueChecks(this.clock.now(), CHECK_SWEEP_PAGE);
    if (ids.length > 0) await this.dispatcher.dispatch(ids.map(txId));
    return ids.length;
  }

  /** One check of one half message (the worker). Safe to run twice: the check lease lets one through. */
  async check(transactionId: string): Promise<CheckStatus | 'skipped'> {
    let half = await this.stores.deferred.get(idOf(transactionId) ?? '');
    let now = this.clock.now();
    const early = half?.transaction?.nextCheckAt === undefined ? 0 : half.transaction.nextCheckAt - now;
    if (half?.state === 'prepared' && early > 0 && early <= CHECK_EARLY_WAIT_MS) {
      // A timer that fired a moment early (another host's clock): wait for the due time, then read again.
      await (this.options.wait ?? sleep)(early);
      half = await this.stores.deferred.get(half.id);
      now = this.clock.now();
    }
    if (half?.state === 'committing') {
      // A commit's claim (under way, or left by a crash): finished here, or left with a check-back armed
      // (or closed as expired: the item says so, and nobody is left to answer).
      await this.commitOrLeave(transactionId, 'check', 1).catch((error: unknown) => {
        if (!(error instanceof TransactionExpiredError)) throw error;
      });
      return 'skipped';
    }
    const tx = half?.transaction;
    if (!half || half.state !== 'prepared' || !tx || tx.kept || tx.nextCheckAt === undefined || tx.nextCheckAt > now) return 'skipped';
    const producer = await this.stores.producers.get(tx.producerGroup);
    const interval = (producer?.checkIntervalSeconds ?? Limits.checkIntervalDefaultSeconds) * 1000;
    if (!(await this.stores.deferred.leaseCheck(half.id, tx.nextCheckAt, now + interval))) return 'skipped';
    const checkCount = tx.checkCount + 1;
    const started = this.clock.now();
    const outcome: { status: CheckStatus; httpStatus: number | null; error: string | null } = producer
      ? await this.callChecker(producer, half, checkCount)
      : { status: 'unknown', httpStatus: null, error: `producer group '${tx.producerGroup}' no longer exists` };
    const record: CheckRecord = { n: checkCount, at: started, latencyMs: this.clock.now() - started, ...outcome };
    await this.stores.deferred.addCheck(half.id, record, Math.ceil(now / 1000) + CHECK_RECORD_KEEP_SECONDS);
    if (outcome.status !== 'unknown') {
      await this.resolve(transactionId, outcome.status, 'check');
      return outcome.status;
    }
    const maxChecks = producer?.maxChecks ?? Limits.maxChecksDefault;
    if (checkCount >= maxChecks) {
      const action = producer?.onMaxChecks ?? 'rollback';
      if (action === 'keep') await this.stores.deferred.keep(half.id, this.clock.now());
      else await this.resolve(transactionId, action, 'onMaxChecks');
    } else {
      // The next check, leased above at now + interval, to the second (the sweep is the safety net).
      await this.options.timers?.armChecks([{ transactionId, at: now + interval }]);
    }
    return 'unknown';
  }

  private async resolve(transactionId: string, action: 'commit' | 'rollback', by: 'check' | 'onMaxChecks') {
    try {
      if (action === 'commit') await this.commitOrLeave(transactionId, by, 1); // a claim under way: a check-back is armed for it
      else await this.rollback(transactionId, by);
    } catch (error) {
      // The producer resolved it first (the other way): the first resolution wins.
      if (!(error instanceof TransactionAlreadyResolvedError)) throw error;
    }
  }

  /** A Standard Webhooks signed POST; anything but a clear answer within the timeout is `unknown`. */
  private async callChecker(
    producer: StoredProducer,
    half: Deferred,
    checkCount: number,
  ): Promise<{ status: CheckStatus; httpStatus: number | null; error: string | null }> {
    const now = this.clock.now();
    const secrets = await openSigningSecrets(
      this.secrets,
      { sealed: producer.sealedSecret, previous: producer.sealedPrevious, previousUntil: producer.previousUntil, rotatedAt: producer.secretRotatedAt },
      secretContext(producer.name),
      now,
    );
    const transactionId = txId(half.id);
    const payload = JSON.stringify({
      type: 'transaction.check',
      timestamp: iso(now),
      data: {
        transactionId,
        producerGroup: producer.name,
        topic: half.topic,
        messageId: half.record.messageId,
        checkCount,
        sentAt: iso(half.record.sentAt),
        message: messageContent(half.record),
      },
    });
    const webhookId = `chk_${this.random.id()}`;
    const headers = signedHeaders(secrets, webhookId, now, payload, 'Sluice-Checkback/1');
    try {
      const res = await this.webhooks.post(producer.checkerUrl, headers, payload, this.timeoutMs);
      if (res.status < 200 || res.status >= 300) {
        return { status: 'unknown' as const, httpStatus: res.status, error: `checker answered HTTP ${res.status}` };
      }
      let status: unknown;
      try {
        status = (JSON.parse(res.body) as { status?: unknown }).status;
      } catch {
        return { status: 'unknown' as const, httpStatus: res.status, error: 'checker answer is not JSON' };
      }
      if (status === 'commit' || status === 'rollback' || status === 'unknown') {
        return { status: status as CheckStatus, httpStatus: res.status, error: null };
      }
      return { status: 'unknown' as const, httpStatus: res.status, error: 'checker answer has no valid status' };
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' || error.name === 'AbortError' ? `no answer within ${this.timeoutMs} ms` : error.message) : 'call failed';
      this.options.log?.('checker call failed', { producerGroup: producer.name, transactionId, reason });
      return { status: 'unknown' as const, httpStatus: null, error: reason };
    }
  }

  /** The answer to a commit of a transaction whose claimed commit was closed past its records' expiry. */
  private expired(transactionId: string, half: Deferred): TransactionExpiredError {
    const at = half.transaction?.resolvedAt;
    return new TransactionExpiredError(
      `Transaction '${transactionId}' was committed${at === undefined ? '' : ` at ${iso(at)}`}, but its message's retention ran out before ` +
        `its append was confirmed: message '${half.record.messageId}' was delivered at most once, perhaps never, and will not be delivered now. ` +
        'Send it again if it must be delivered.',
    );
  }

  private async require(transactionId: string): Promise<Deferred> {
    const id = idOf(transactionId);
    const half = id === undefined ? undefined : await this.stores.deferred.get(id);
    if (!half || !half.transaction) throw new TransactionNotFoundError(`Transaction '${transactionId}' does not exist.`);
    return half;
  }

  private async committedView(half: Deferred, seq: number | undefined, known?: Topic) {
    const topic = known ?? (await this.stores.catalog.getTopic(half.topic));
    return {
      state: 'committed' as const,
      messageId: half.record.messageId,
      ...(topic?.type === 'fifo' && seq !== undefined ? { sequence: seq } : {}),
    };
  }
}
