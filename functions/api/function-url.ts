/**
 * The whole v1 API behind one Lambda function URL (`entryPoint: 'functionUrl'`, the
 * default deployment): Lambda hands it every request as a payload format 2.0 event
 * with `routeKey` `$default` and no `pathParameters`, so it finds the route of
 * `rawPath` here — as the HTTP API does for the per-route functions — and runs that
 * route's handler with the event the HTTP API would have given it.
 * Authentication (AWS_IAM, SigV4) happens before Lambda invokes the function.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { HttpProblemError, toProblem } from '../../lib/http/problem.js';
import type { HttpResult } from '../commons/http.js';
import { compileRoutes, matchRoute } from '../commons/route-table.js';
import { routeHandlers } from './route-handlers.js';
import { routes } from './routes.js';

const compiled = compileRoutes(routes);

function problem(error: HttpProblemError): HttpResult {
  const { problem: body, headers } = toProblem(error);
  return { statusCode: body.status, headers: { 'content-type': 'application/problem+json', ...headers }, body: JSON.stringify(body) };
}

export async function handler(event: APIGatewayProxyEventV2, context: Context): Promise<HttpResult> {
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
      const run = routeHandlers[def.entry];
      if (!run) throw new Error(`No handler for route ${def.entry}`);
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
}
