import { readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  DelayTooLongError,
  GroupNotFoundError,
  InvalidArgumentError,
  MisconfiguredError,
  PayloadTooLargeError,
  ReceiptHandleExpiredError,
  ShardKeyRequiredError,
  SluiceError,
  ThrottledError,
  TopicNotFoundError,
  TransactionAlreadyResolvedError,
  TopicRecentlyDeletedError,
  GroupRecentlyDeletedError,
  UnavailableError,
} from '../../lib/domain/errors.js';
import { toProblem } from '../../lib/http/problem.js';

describe('problem mapping', () => {
  it.each([
    [new InvalidArgumentError('x', { issues: [{ path: 'a', message: 'b' }] }), 400, 'InvalidArgument'],
    [new DelayTooLongError('x'), 400, 'DelayTooLong'],
    [new ShardKeyRequiredError('x'), 400, 'ShardKeyRequired'],
    [new PayloadTooLargeError('x'), 413, 'PayloadTooLarge'],
    [new TopicNotFoundError('t'), 404, 'TopicNotFound'],
    [new GroupNotFoundError('g'), 404, 'GroupNotFound'],
    [new ConflictError('x'), 409, 'Conflict'],
    [new TransactionAlreadyResolvedError('x'), 409, 'TransactionAlreadyResolved'],
    [new ReceiptHandleExpiredError('x'), 409, 'ReceiptHandleExpired'],
    [new ThrottledError('x', 2), 429, 'Throttled'],
    [new UnavailableError('x'), 503, 'ServiceUnavailable'],
  ])('%s → %i %s', (error, status, code) => {
    const { problem, unexpected } = toProblem(error);
    expect(problem).toMatchObject({ status, code, detail: error.message, type: `urn:sluice:problem:${code}` });
    expect(unexpected).toBe(false);
  });

  it('answers a misconfiguration with a 500 that says so, and has it logged', () => {
    const { problem, headers, unexpected } = toProblem(new MisconfiguredError('Timers are misconfigured: x.'));
    expect(problem).toMatchObject({ status: 500, code: 'Misconfigured', detail: 'Timers are misconfigured: x.' });
    expect(headers).toEqual({});
    expect(unexpected).toBe(true);
  });

  it('adds Retry-After to retryable errors', () => {
    expect(toProblem(new ThrottledError('x', 2)).headers).toEqual({ 'retry-after': '2' });
  });

  it('hides unexpected errors behind an opaque 500', () => {
    const { problem, unexpected } = toProblem(new Error('secret detail'));
    expect(problem).toMatchObject({ status: 500, code: 'InternalError' });
    expect(JSON.stringify(problem)).not.toContain('secret');
    expect(unexpected).toBe(true);
  });

  it('adds Retry-After from the table to every retryable error, and to no other', () => {
    expect(toProblem(new UnavailableError('x', 3)).headers).toEqual({ 'retry-after': '3' });
    expect(toProblem(new TopicRecentlyDeletedError('t', 4))).toMatchObject({ problem: { status: 409, code: 'TopicRecentlyDeleted' }, headers: { 'retry-after': '4' } });
    expect(toProblem(new GroupRecentlyDeletedError('g', 5))).toMatchObject({ problem: { status: 409, code: 'GroupRecentlyDeleted' }, headers: { 'retry-after': '5' } });
    expect(toProblem(new ConflictError('x')).headers).toEqual({});
  });

  it('answers an opaque, logged 500 for a SluiceError without a row, never a silent 4xx', () => {
    class UnmappedError extends SluiceError {
      readonly code = 'Unmapped';
    }
    const { problem, headers, unexpected } = toProblem(new UnmappedError('secret detail'));
    expect(problem).toMatchObject({ status: 500, code: 'InternalError' });
    expect(JSON.stringify(problem)).not.toContain('secret');
    expect(headers).toEqual({});
    expect(unexpected).toBe(true);
  });
});

/**
 * Every SluiceError class that lib/ exports, with the status and code it answers. A new error class
 * fails here until it has a line below — and a row in lib/http/problem.ts if it answers a status of
 * its own: without one it would answer 500.
 */
const ANSWERS: Record<string, { status: number; code: string; logged?: true }> = {
  InvalidArgumentError: { status: 400, code: 'InvalidArgument' },
  UnsafeCheckerUrlError: { status: 400, code: 'InvalidArgument' },
  DelayTooLongError: { status: 400, code: 'DelayTooLong' },
  ShardKeyRequiredError: { status: 400, code: 'ShardKeyRequired' },
  UnauthorizedError: { status: 401, code: 'Unauthorized' },
  NotFoundError: { status: 404, code: 'NotFound' },
  TopicNotFoundError: { status: 404, code: 'TopicNotFound' },
  GroupNotFoundError: { status: 404, code: 'GroupNotFound' },
  MessageNotFoundError: { status: 404, code: 'MessageNotFound' },
  ProducerGroupNotFoundError: { status: 404, code: 'ProducerGroupNotFound' },
  TransactionNotFoundError: { status: 404, code: 'TransactionNotFound' },
  ConflictError: { status: 409, code: 'Conflict' },
  ReceiptHandleExpiredError: { status: 409, code: 'ReceiptHandleExpired' },
  TopicRecentlyDeletedError: { status: 409, code: 'TopicRecentlyDeleted' },
  GroupRecentlyDeletedError: { status: 409, code: 'GroupRecentlyDeleted' },
  ProducerInUseError: { status: 409, code: 'ProducerInUse' },
  PushGroupReceiveError: { status: 409, code: 'PushGroup' },
  TooManyPushGroupsError: { status: 409, code: 'TooManyPushGroups' },
  TooManyDeadLetterGroupsError: { status: 409, code: 'TooManyDeadLetterGroups' },
  TopicItemsTooLargeError: { status: 409, code: 'TopicItemsTooLarge' },
  PartitionRaiseIncompleteError: { status: 409, code: 'PartitionRaiseIncomplete' },
  TransactionAlreadyResolvedError: { status: 409, code: 'TransactionAlreadyResolved' },
  TransactionExpiredError: { status: 409, code: 'TransactionExpired' },
  PayloadTooLargeError: { status: 413, code: 'PayloadTooLarge' },
  ThrottledError: { status: 429, code: 'Throttled' },
  UnavailableError: { status: 503, code: 'ServiceUnavailable' },
  // The one SluiceError answered 500: typed and precise, and logged with its cause for an operator.
  MisconfiguredError: { status: 500, code: 'Misconfigured', logged: true },
};

type ErrorClass = new (message: string, retryAfterSeconds: number) => SluiceError;

/** The SluiceError classes exported by the modules of lib/ (the client SDK has errors of its own), by name. */
async function sluiceErrorClasses(): Promise<Map<string, ErrorClass>> {
  const lib = fileURLToPath(new URL('../../lib/', import.meta.url));
  const modules = readdirSync(lib, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.startsWith(`client${sep}`))
    .sort();
  const classes = new Map<string, ErrorClass>();
  for (const file of modules) {
    const exports = (await import(pathToFileURL(join(lib, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(exports)) {
      if (typeof value === 'function' && value.prototype instanceof SluiceError) classes.set(value.name, value as ErrorClass);
    }
  }
  return classes;
}

describe('every SluiceError of lib/', () => {
  it('answers its own status and code from the table, never an opaque 500', async () => {
    const classes = await sluiceErrorClasses();
    expect([...classes.keys()].sort()).toEqual(Object.keys(ANSWERS).sort());
    for (const [name, type] of classes) {
      const error = new type('detail', 7);
      const { problem, unexpected } = toProblem(error);
      const { logged, ...answer } = ANSWERS[name] ?? { status: 0, code: '' };
      expect({ name, status: problem.status, code: problem.code, unexpected }).toEqual({ name, ...answer, unexpected: logged === true });
      expect(problem.code, name).toBe(error.code);
    }
  });

  it('carries Retry-After exactly when the error says when to retry', async () => {
    for (const [name, type] of await sluiceErrorClasses()) {
      const error = new type('detail', 7) as SluiceError & { retryAfterSeconds?: unknown };
      const expected = typeof error.retryAfterSeconds === 'number' ? { 'retry-after': '7' } : {};
      expect({ name, headers: toProblem(error).headers }).toEqual({ name, headers: expected });
    }
  });
});
