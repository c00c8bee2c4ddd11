/**
 * A function-URL handler for a set of v1 routes: Lambda hands a function URL every
 * request as a payload format 2.0 event with `routeKey` `$default` and no
 * `pathParameters`, so this finds the route of `rawPath` — as the HTTP API does for
 * the per-route functions — and runs that route's handler with the event the HTTP API
 * would have given it. The `api` function serves every route with it
 * (functions/api/function-url.ts), the small `receive` function only receive
 * (functions/api/receive-url.ts). Authentication (AWS_IAM, SigV4) happens before
 * Lambda invokes the function.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { HttpProblemError, toProblem } from '../../lib/http/problem.js';
import type { RouteDef } from '../api/routes.js';
import type { HttpResult } from './http.js';
import { compileRoutes, matchRoute } from './route-table.js';

export type RouteHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

function problem(error: HttpProblemError): HttpResult {
  const { problem: body, headers } = toProblem(error);
  return { statusCode: body.status, headers: { 'content-type': 'application/problem+json', ...headers }, body: JSON.stringify(body) };
}

/** The handler of a function URL serving `defs`, each run by `handlers[def.entry]`; other paths answer 404/405 problems. */
export function functionUrlHandler(defs: readonly RouteDef[], handlers: Readonly<Record<string, RouteHandler>>): RouteHandler {
  const missing = defs.filter((def) => !handlers[def.entry]).map((def) => def.entry);
  if (missing.length > 0) throw new Error(`No handler for route ${missing.join(', ')}`);
  const compiled = compileRoutes(defs);
  return async (event, context) => {
    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath;
    const found = matchRoute(compiled, method, path);
    switch (found.kind) {
      case 'not-found':
        return problem(new HttpProblemError(404, 'NotFound', 'Not found', `No route for ${method} ${path}.`));
      case 'method-not-allowed': {
        const allow = found.allow.join(', ');
        return problem(new HttpProblemError(405, 'MethodNotAllowed', 'Method not allowed', `${method} is not allowed on ${path}; use ${allow}.`, undefined, { allow }));
      }
      case 'bad-encoding':
        return problem(new HttpProblemError(400, 'InvalidArgument', 'Invalid argument', 'The path is not valid percent-encoding.'));
      case 'found': {
        const { def } = found.route;
        const run = handlers[def.entry] as RouteHandler;
        const routeKey = `${def.method} ${def.path}`;
        const hasParameters = found.route.names.length > 0;
        return run(
          {
            ...event,
            routeKey,
            requestContext: { ...event.requestContext, routeKey },
            ...(hasParameters ? { pathParameters: found.pathParameters } : {}),
          },
          context,
        );
      }
    }
  };
}
