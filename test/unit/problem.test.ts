import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  DelayTooLongError,
  GroupNotFoundError,
  InvalidArgumentError,
  PayloadTooLargeError,
  ReceiptHandleExpiredError,
  ShardKeyRequiredError,
  ThrottledError,
  TopicNotFoundError,
  TransactionAlreadyResolvedError,
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

  it('adds Retry-After to retryable errors', () => {
    expect(toProblem(new ThrottledError('x', 2)).headers).toEqual({ 'retry-after': '2' });
  });

  it('hides unexpected errors behind an opaque 500', () => {
    const { problem, unexpected } = toProblem(new Error('secret detail'));
    expect(problem).toMatchObject({ status: 500, code: 'InternalError' });
    expect(JSON.stringify(problem)).not.toContain('secret');
    expect(unexpected).toBe(true);
  });
});
