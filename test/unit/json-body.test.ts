import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonBody, unstorable } from '../../lib/http/json-body.js';
import { HttpProblemError } from '../../lib/http/problem.js';

const refusal = (text: string) => {
  try {
    parseJsonBody(text);
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('parseJsonBody', () => {
  it('keeps every ordinary key, constructor and toString included, as an own key', () => {
    const parsed = parseJsonBody('{"properties":{"constructor":"y","toString":"z","hasOwnProperty":"w"}}') as { properties: Record<string, string> };
    expect(Object.entries(parsed.properties)).toEqual([['constructor', 'y'], ['toString', 'z'], ['hasOwnProperty', 'w']]);
  });

  it('refuses __proto__ at any depth with its path, whatever its value', () => {
    for (const [text, path] of [
      ['{"__proto__":1}', '__proto__'],
      ['{"properties":{"a":"b","__proto__":"x"}}', 'properties/__proto__'],
      ['{"entries":[{"body":"x"},{"properties":{"__proto__":{"polluted":true}}}]}', 'entries/1/properties/__proto__'],
    ] as const) {
      const error = refusal(text);
      expect(error).toBeInstanceOf(HttpProblemError);
      expect(error).toMatchObject({ status: 400, code: 'InvalidArgument', issues: [{ path }] });
      expect((error as Error).message).toContain(path);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses lone surrogates in keys and strings but keeps pairs', () => {
    expect(refusal('{"a":"\\ud800"}')).toMatchObject({ issues: [{ path: 'a' }] });
    expect(refusal('{"k":["ok","x\\udc00"]}')).toMatchObject({ issues: [{ path: 'k/1' }] });
    expect(refusal('{"\\udbff":"v"}')).toMatchObject({ issues: [{ path: '\udbff' }] });
    expect(parseJsonBody('{"a":"\\ud83d\\ude00"}')).toEqual({ a: '😀' });
  });

  it('answers malformed JSON as before', () => {
    expect(refusal('{"type":')).toMatchObject({ status: 400, issues: [{ path: '', message: 'malformed JSON' }] });
  });

  it('walks any nesting depth without recursion and reports at most 20 issues', () => {
    const depth = 200_000;
    expect(unstorable(JSON.parse(`${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`))).toHaveLength(1);
    expect(unstorable(JSON.parse(`[${Array.from({ length: 1000 }, () => '{"__proto__":1}').join(',')}]`))).toHaveLength(20);
  });

  it('finds nothing in any well-formed JSON without __proto__ (fast-check)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        fc.pre(!text.includes('"__proto__"'));
        expect(parseJsonBody(text)).toEqual(JSON.parse(text));
      }),
    );
  });
});
