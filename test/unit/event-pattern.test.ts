/**
 * The local evaluator of Lambda event-filter patterns against the documented
 * semantics (Lambda: https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html;
 * EventBridge, whose rules Lambda uses:
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html and
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html),
 * and the dispatcher's own filters against the records the table produces.
 */
import { describe, expect, it } from 'vitest';
import { checkPattern, matchesAny, matchesPattern, UnsupportedPatternError, type EventPattern } from '../../lib/domain/event-pattern.js';
import { DISPATCH_FILTERS } from '../../lib/adapters/dynamodb/dispatch-source.js';

describe('event patterns: documented examples', () => {
  // EventBridge "Create event patterns": fields listed must all match; others are ignored.
  const ec2 = {
    version: '0',
    'detail-type': 'EC2 Instance State-change Notification',
    source: 'aws.ec2',
    detail: { 'instance-id': 'i-1234567890abcdef0', state: 'terminated' },
  };

  it('matches when every named field matches and ignores the others', () => {
    expect(matchesPattern({ source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'], detail: { state: ['terminated'] } }, ec2)).toBe(true);
    expect(matchesPattern({ source: ['aws.ec2'], detail: { state: ['running'] } }, ec2)).toBe(false);
  });

  it('ORs the values of one field ("PaymentType is Credit or Debit")', () => {
    expect(matchesPattern({ source: ['aws.ec2', 'aws.fargate'] }, ec2)).toBe(true);
    expect(matchesPattern({ source: ['aws.s3', 'aws.fargate'] }, ec2)).toBe(false);
  });

  it('needs every named field to be present', () => {
    expect(matchesPattern({ detail: { 'c-count': ['5'] } }, ec2)).toBe(false);
    expect(matchesPattern({ region: ['us-west-1'] }, ec2)).toBe(false);
  });

  it('compares strings exactly (no case folding) and numbers without normalising them to strings', () => {
    expect(matchesPattern({ source: ['AWS.EC2'] }, ec2)).toBe(false);
    expect(matchesPattern({ detail: { 'risk-score': [80] } }, { detail: { 'risk-score': 80 } })).toBe(true);
    expect(matchesPattern({ detail: { 'risk-score': ['80'] } }, { detail: { 'risk-score': 80 } })).toBe(false);
    expect(matchesPattern({ detail: { responseElements: [null] } }, { detail: { responseElements: null } })).toBe(true);
  });

  it('prefix: "Region is in the US"', () => {
    expect(matchesPattern({ time: [{ prefix: '2017-10-02' }] }, { time: '2017-10-02T18:43:48Z' })).toBe(true);
    expect(matchesPattern({ time: [{ prefix: '2017-10-02' }] }, { time: '2017-10-03T18:43:48Z' })).toBe(false);
    // Prefix matching is for strings.
    expect(matchesPattern({ n: [{ prefix: '1' }] }, { n: 12 })).toBe(false);
  });

  it('exists: true needs a present leaf; false needs it absent — an object is not a leaf', () => {
    const event = { detail: { state: ['initializing', 'running'], 'c-count': { c1: 100 } } };
    expect(matchesPattern({ detail: { state: [{ exists: true }] } }, event)).toBe(true);
    expect(matchesPattern({ detail: { 'd-count': [{ exists: false }] } }, event)).toBe(true);
    expect(matchesPattern({ detail: { 'd-count': [{ exists: true }] } }, event)).toBe(false);
    // "The preceding event pattern also matches ... because c-count isn't a leaf node."
    expect(matchesPattern({ detail: { 'c-count': [{ exists: false }] } }, event)).toBe(true);
    expect(matchesPattern({ detail: { 'c-count': [{ exists: true }] } }, event)).toBe(false);
    // exists:false under a missing parent object
    expect(matchesPattern({ missing: { x: [{ exists: false }] } }, event)).toBe(true);
  });

  it('anything-but: a present value equal to none of the listed ones', () => {
    expect(matchesPattern({ detail: { state: [{ 'anything-but': 'initializing' }] } }, { detail: { state: 'running' } })).toBe(true);
    expect(matchesPattern({ detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } }, { detail: { state: 'stopped' } })).toBe(false);
    expect(matchesPattern({ detail: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } }, { detail: { 'x-limit': 150 } })).toBe(true);
    expect(matchesPattern({ detail: { state: [{ 'anything-but': 'initializing' }] } }, { detail: {} })).toBe(false);
  });

  it('an array in the event matches when one of its elements does', () => {
    const event = { resources: ['arn:aws:ec2:x', 'arn:aws:s3:y'] };
    expect(matchesPattern({ resources: ['arn:aws:s3:y'] }, event)).toBe(true);
    expect(matchesPattern({ resources: [{ prefix: 'arn:aws:ec2' }] }, event)).toBe(true);
    expect(matchesPattern({ resources: ['arn:aws:sns:z'] }, event)).toBe(false);
  });

  it('multi-level DynamoDB filtering: "Keys.Id.N is 101"', () => {
    const record = { dynamodb: { Keys: { Id: { N: '101' } }, NewImage: { Message: { S: 'New item!' }, Id: { N: '101' } } } };
    expect(matchesPattern({ dynamodb: { Keys: { Id: { N: ['101'] } } } }, record)).toBe(true);
    expect(matchesPattern({ dynamodb: { Keys: { Id: { N: ['102'] } } } }, record)).toBe(false);
  });

  it('ORs the filters of one event source', () => {
    const filters: EventPattern[] = [{ a: ['1'] }, { b: ['2'] }];
    expect(matchesAny(filters, { a: '1' })).toBe(true);
    expect(matchesAny(filters, { b: '2' })).toBe(true);
    expect(matchesAny(filters, { a: '2', b: '1' })).toBe(false);
  });

  it('refuses operators it does not implement instead of guessing', () => {
    for (const pattern of [
      { price: [{ numeric: ['>', 10] }] },
      { ip: [{ cidr: '10.0.0.0/24' }] },
      { $or: [{ a: ['1'] }] },
      { a: [] },
      {},
      { a: [{ 'anything-but': { prefix: 'x' } }] },
      { a: [{ prefix: 'x', exists: true }] },
    ]) {
      expect(() => checkPattern(pattern), JSON.stringify(pattern)).toThrow(UnsupportedPatternError);
    }
    for (const pattern of DISPATCH_FILTERS) expect(() => checkPattern(pattern)).not.toThrow();
  });
});

describe('the dispatcher filters', () => {
  const record = (eventName: string, pk: string, sk: string, image: Record<string, unknown>) => ({
    eventName,
    dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } }, NewImage: { pk: { S: pk }, sk: { S: sk }, ...image } },
  });
  const passes = (r: unknown) => matchesAny(DISPATCH_FILTERS, r);

  it('pass segment inserts that carry nf or w (as numbers)', () => {
    expect(passes(record('INSERT', 'S#t:a/p:0', '0000000000000001', { w: { N: '1' } }))).toBe(true);
    expect(passes(record('INSERT', 'S#t:a/k:x', '1764500000000001', { nf: { N: '2' } }))).toBe(true);
    expect(passes(record('INSERT', 'S#o:g/k:x', '0000000000000007', { nf: { N: '0' }, w: { N: '1' } }))).toBe(true);
  });

  it('drop unflagged segments, other item kinds, sentinels, updates and deletes', () => {
    expect(passes(record('INSERT', 'S#t:a/p:0', '0000000000000001', {}))).toBe(false);
    expect(passes(record('INSERT', 'C#g', 't:a/p:0', { w: { N: '1' } }))).toBe(false);
    expect(passes(record('INSERT', 'S#t:a/p:0', '#', { w: { N: '1' } }))).toBe(false);
    expect(passes(record('MODIFY', 'S#t:a/p:0', '0000000000000001', { w: { N: '1' } }))).toBe(false);
    expect(passes(record('REMOVE', 'S#t:a/p:0', '0000000000000001', { w: { N: '1' } }))).toBe(false);
    // A flag of another type (a string) is not the flag.
    expect(passes(record('INSERT', 'S#t:a/p:0', '0000000000000001', { w: { S: '1' } }))).toBe(false);
  });

  it('stay within the event source mapping limits (5 filters, 4,096 characters a pattern)', () => {
    expect(DISPATCH_FILTERS.length).toBeLessThanOrEqual(5);
    for (const pattern of DISPATCH_FILTERS) expect(JSON.stringify(pattern).length).toBeLessThanOrEqual(4096);
  });
});
