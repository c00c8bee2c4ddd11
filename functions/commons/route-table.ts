/**
 * Finds the v1 route of a request path: the local gateway and the function-URL entry
 * point (functions/api/function-url.ts) resolve `{name}` path parameters the same way
 * API Gateway's HTTP API does for its routes.
 */
import type { RouteDef } from '../api/routes.js';

export interface CompiledRoute {
  readonly def: RouteDef;
  readonly pattern: RegExp;
  /** The `{name}`s of the path, in order. */
  readonly names: readonly string[];
}

/** What a method and path resolve to. */
export type RouteMatch<R extends CompiledRoute = CompiledRoute> =
  | { readonly kind: 'found'; readonly route: R; readonly pathParameters: Record<string, string> }
  /** The path names routes, none for this method: the methods it allows. */
  | { readonly kind: 'method-not-allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'not-found' }
  /** A path parameter is not valid percent-encoding. */
  | { readonly kind: 'bad-encoding' };

export function compileRoutes(defs: readonly RouteDef[]): CompiledRoute[] {
  return defs.map((def) => {
    const names: string[] = [];
    const pattern = new RegExp(`^${def.path.replace(/[.]/g, '\\.').replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'))}$`);
    return { def, pattern, names };
  });
}

/** The routes whose path matches (any method). */
export function routesOfPath<R extends CompiledRoute>(compiled: readonly R[], path: string): Array<{ route: R; match: RegExpExecArray }> {
  return compiled.map((route) => ({ route, match: route.pattern.exec(path) })).filter((m): m is { route: R; match: RegExpExecArray } => m.match !== null);
}

/**
 * The route of `method` on `path` (the percent-encoded path as sent), with its path
 * parameters decoded — API Gateway hands handlers decoded `pathParameters` too.
 */
export function matchRoute<R extends CompiledRoute>(compiled: readonly R[], method: string, path: string): RouteMatch<R> {
  const matches = routesOfPath(compiled, path);
  const found = matches.find((m) => m.route.def.method === method);
  if (!found) {
    if (matches.length > 0) return { kind: 'method-not-allowed', allow: matches.map((m) => m.route.def.method) };
    return { kind: 'not-found' };
  }
  // Null-prototype, as API Gateway's JSON gives the Lambda: a parameter named like a prototype member stays data.
  const pathParameters: Record<string, string> = Object.create(null) as Record<string, string>;
  try {
    found.route.names.forEach((name, i) => (pathParameters[name] = decodeURIComponent(found.match[i + 1] ?? '')));
  } catch {
    return { kind: 'bad-encoding' };
  }
  return { kind: 'found', route: found.route, pathParameters };
}
