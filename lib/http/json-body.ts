/**
 * JSON request bodies, parsed so that every object key and string a client
 * sends can be stored and answered exactly — or is refused with its path.
 *
 * Two things JSON can carry do not survive the way to DynamoDB and back:
 * - the key `__proto__`: any plain-object assignment (zod's record parsing,
 *   the DynamoDB marshaller and the SDK's map codecs) treats it as the
 *   prototype setter, so it would be dropped silently or, with an object
 *   value, become the prototype and slip past validation;
 * - lone UTF-16 surrogates (`"\ud800"`): DynamoDB stores UTF-8, where they
 *   do not exist, so they would come back as U+FFFD.
 * Every other key (`constructor`, `toString`, `hasOwnProperty`, …) is an
 * ordinary key and round-trips.
 */
import type { FieldIssue } from '../domain/errors.js';
import { HttpProblemError } from './problem.js';

/** A lone high surrogate (no low one after it) or a lone low surrogate (no high one before it). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Enough issues to fix a request; a hostile one cannot make the answer large. */
const MAX_ISSUES = 20;

const invalid = (detail: string, issues: FieldIssue[]) => new HttpProblemError(400, 'InvalidArgument', 'Invalid argument', detail, issues);

/**
 * Parses `text` as JSON and checks every key and string of the result.
 * @throws HttpProblemError 400 `InvalidArgument` for malformed JSON, a `__proto__` key or a lone surrogate, with the path of each.
 */
export function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'not JSON';
    throw invalid(`The request body is not valid JSON: ${reason}.`, [{ path: '', message: 'malformed JSON' }]);
  }
  const issues = unstorable(value);
  const first = issues[0];
  if (first) throw invalid(`Invalid body: ${first.path || '(root)'} ${first.message}.`, issues);
  return value;
}

/** A path as a chain to its parent: building it costs O(1) per value whatever the nesting. */
interface PathLink {
  parent: PathLink | undefined;
  key: string;
}

const pathOf = (link: PathLink | undefined): string => {
  const parts: string[] = [];
  for (let at = link; at; at = at.parent) parts.push(at.key);
  return parts.reverse().join('/');
};

/** The keys and strings of a parsed JSON value that cannot be stored exactly (iterative: nesting depth is the client's). */
export function unstorable(root: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const stack: Array<[unknown, PathLink | undefined]> = [[root, undefined]];
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const [value, path] = stack.pop() as [unknown, PathLink | undefined];
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) issues.push({ path: pathOf(path), message: 'contains a lone UTF-16 surrogate, which UTF-8 cannot store' });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], { parent: path, key: String(i) }]);
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        const at = { parent: path, key };
        if (key === '__proto__') issues.push({ path: pathOf(at), message: 'is a key JavaScript reserves (__proto__); use another name' });
        else if (LONE_SURROGATE.test(key)) issues.push({ path: pathOf(at), message: 'is a key with a lone UTF-16 surrogate, which UTF-8 cannot store' });
        else stack.push([(value as Record<string, unknown>)[key], at]);
      }
    }
  }
  return issues;
}
