/**
 * The part of the Lambda event-filtering pattern language that Sluice's
 * filters use, evaluated the way Lambda evaluates it, so the local stream
 * poller passes exactly the records an event source mapping with the same
 * `FilterCriteria` passes on AWS.
 *
 * Semantics (Lambda uses EventBridge's pattern syntax and rules:
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html,
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html,
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html):
 *  - a pattern has the event's structure; every field it names must match
 *    (AND), fields it does not name are ignored;
 *  - a leaf of the pattern is an array of rules, any of which may match (OR);
 *  - a literal rule matches an equal value, character by character (no case
 *    folding; numbers are not normalised: `"1"` is not `1`);
 *  - `{ "prefix": p }` matches a string starting with p;
 *  - `{ "exists": true }` matches a field that is present and a leaf,
 *    `{ "exists": false }` one that is absent — a field holding an object is
 *    not a leaf, so it counts as absent ("exists matching only works on leaf
 *    nodes");
 *  - `{ "anything-but": v | [v…] }` matches a present leaf equal to none of them;
 *  - a missing field matches nothing but `{ "exists": false }`;
 *  - an array in the event matches a rule when one of its elements does;
 *  - several filters of one event source are ORed: a record passes if any matches.
 * Other operators (numeric, cidr, suffix, wildcard, $or, …) are refused by
 * {@link checkPattern} rather than guessed at.
 */

export type PatternRule =
  | string
  | number
  | boolean
  | null
  | { readonly prefix: string }
  | { readonly exists: boolean }
  | { readonly 'anything-but': string | number | readonly string[] | readonly number[] };

/** A filter pattern (the JSON of one `Filters[].Pattern`). */
export interface EventPattern {
  readonly [field: string]: EventPattern | readonly PatternRule[];
}

export class UnsupportedPatternError extends Error {}

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isLeaf = (value: Json): boolean => value !== undefined && !isObject(value);

function ruleMatchesScalar(rule: PatternRule, value: Json): boolean {
  if (rule === null || typeof rule !== 'object') return value === rule;
  if ('prefix' in rule) return typeof value === 'string' && value.startsWith(rule.prefix);
  if ('exists' in rule) return rule.exists;
  const excluded: readonly Json[] = Array.isArray(rule['anything-but']) ? rule['anything-but'] : [rule['anything-but']];
  return !excluded.includes(value);
}

function ruleMatches(rule: PatternRule, value: Json): boolean {
  if (!isLeaf(value)) return typeof rule === 'object' && rule !== null && 'exists' in rule && !rule.exists;
  if (Array.isArray(value)) {
    if (typeof rule === 'object' && rule !== null && 'exists' in rule) return rule.exists;
    return value.some((element) => isLeaf(element) && !Array.isArray(element) && ruleMatchesScalar(rule, element));
  }
  return ruleMatchesScalar(rule, value);
}

/** Whether `event` matches `pattern` (see the module comment for the rules). */
export function matchesPattern(pattern: EventPattern, event: Json): boolean {
  const fields = isObject(event) ? event : {};
  return Object.entries(pattern).every(([field, expected]) => {
    const value = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (Array.isArray(expected)) return (expected as readonly PatternRule[]).some((rule) => ruleMatches(rule, value));
    return matchesPattern(expected as EventPattern, value);
  });
}

/** Whether `event` matches at least one of `patterns` (an event source's filters are ORed). */
export const matchesAny = (patterns: readonly EventPattern[], event: Json): boolean =>
  patterns.some((pattern) => matchesPattern(pattern, event));

const checkRule = (rule: unknown, path: string): void => {
  if (rule === null || ['string', 'number', 'boolean'].includes(typeof rule)) return;
  const keys = typeof rule === 'object' ? Object.keys(rule as object) : [];
  const [key] = keys;
  const value = key === undefined ? undefined : (rule as Record<string, unknown>)[key];
  const ok =
    keys.length === 1 &&
    ((key === 'prefix' && typeof value === 'string') ||
      (key === 'exists' && typeof value === 'boolean') ||
      (key === 'anything-but' &&
        (typeof value === 'string' ||
          typeof value === 'number' ||
          (Array.isArray(value) && value.length > 0 && (value.every((v) => typeof v === 'string') || value.every((v) => typeof v === 'number'))))));
  if (!ok) throw new UnsupportedPatternError(`${path}: rule ${JSON.stringify(rule)} is not one this evaluator implements`);
};

/**
 * Throws {@link UnsupportedPatternError} unless `pattern` uses only the rules
 * above; an empty pattern or rule list is refused too (Lambda would match
 * everything or nothing, and neither is what a caller means).
 */
export function checkPattern(pattern: unknown, path = '$'): asserts pattern is EventPattern {
  if (!isObject(pattern) || Object.keys(pattern).length === 0) throw new UnsupportedPatternError(`${path}: a pattern is a non-empty object`);
  for (const [field, expected] of Object.entries(pattern)) {
    if (field.startsWith('$')) throw new UnsupportedPatternError(`${path}.${field}: operators like ${field} are not implemented`);
    if (Array.isArray(expected)) {
      if (expected.length === 0) throw new UnsupportedPatternError(`${path}.${field}: an empty rule list matches nothing`);
      expected.forEach((rule, i) => checkRule(rule, `${path}.${field}[${i}]`));
    } else checkPattern(expected, `${path}.${field}`);
  }
}
