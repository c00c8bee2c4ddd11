/** The route table as the function-URL entry point and the local gateway resolve it. */
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/api/routes.js';
import { compileRoutes, matchRoute } from '../../functions/commons/route-table.js';

const compiled = compileRoutes(routes);

describe('route table', () => {
  it('finds every route from its own path, with its parameters decoded', () => {
    for (const route of routes) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(`${name} a/b`));
      const found = matchRoute(compiled, route.method, path);
      expect(found.kind === 'found' ? found.route.def.entry : found.kind).toBe(route.entry);
      if (found.kind === 'found') {
        for (const name of found.route.names) expect(found.pathParameters[name]).toBe(`${name} a/b`);
      }
    }
  });

  it('tells a wrong method (with the allowed ones) from an unknown path and bad encoding', () => {
    expect(matchRoute(compiled, 'PUT', '/v1/groups/g/receive')).toEqual({ kind: 'method-not-allowed', allow: ['POST'] });
    expect(matchRoute(compiled, 'GET', '/v1/topics/a/b/c/d')).toEqual({ kind: 'not-found' });
    expect(matchRoute(compiled, 'GET', '/v1/topics/%E0%A4%A')).toEqual({ kind: 'bad-encoding' });
    // The batch path is its own route, not a message id named "batch".
    const batch = matchRoute(compiled, 'POST', '/v1/topics/t/messages/batch');
    expect(batch.kind === 'found' && batch.route.def.entry).toBe('send-batch');
  });

  it('keeps a parameter named like a prototype member as data', () => {
    const found = matchRoute(compiled, 'GET', '/v1/topics/__proto__');
    expect(found.kind).toBe('found');
    if (found.kind === 'found') {
      expect(Object.getPrototypeOf(found.pathParameters)).toBeNull();
      expect(found.pathParameters.topic).toBe('__proto__');
    }
  });
});
