/**
 * The HTTP edge shared by every API handler: parse and validate the request
 * with the route's zod schemas, run the handler, turn errors into problem+json.
 */
import { isUtf8 } from 'node:buffer';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { z } from 'zod';
import { Limits } from '../../lib/domain/model.js';
import { UnavailableError } from '../../lib/domain/errors.js';
import { HttpProblemError, toProblem } from '../../lib/http/problem.js';
import { parseJsonBody } from '../../lib/http/json-body.js';
import { container } from './container.js';
import { flushAppendContention } from './append-metrics.js';

export type HttpResult = APIGatewayProxyStructuredResultV2;

export interface RouteSchemas<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params?: P;
  query?: Q;
  body?: B;
}

export interface Input<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  event: APIGatewayProxyEventV2;
  context: Context;
}

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

export const noContent = (): HttpResult => ({ statusCode: 204, headers: {}, body: '' });

const invalid = (message: string, issues: Array<{ path: string; message: string }>) =>
  new HttpProblemError(400, 'InvalidArgument', 'Invalid argument', message, issues);

/** Issues a 400 lists at most, and the length of each message (an unknown-keys message names every key). */
const ISSUES_MAX = 20;
const ISSUE_MESSAGE_MAX = 300;

export const issuesOf = (error: z.ZodError, prefix: string) =>
  error.issues.slice(0, ISSUES_MAX).map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((p) => p !== '').join('/'),
    message: issue.message.length > ISSUE_MESSAGE_MAX ? `${issue.message.slice(0, ISSUE_MESSAGE_MAX - 1)}…` : issue.message,
  }));

function validate<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = issuesOf(parsed.error, where === 'body' ? '' : where);
  const first = issues[0];
  throw invalid(
    first ? `Invalid ${where}: ${first.path || '(root)'} ${first.message}.` : `Invalid ${where}.`,
    issues,
  );
}

function parseBody(event: APIGatewayProxyEventV2): unknown {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : undefined;
  // JSON is UTF-8 (RFC 8259): invalid bytes are refused, not silently replaced by U+FFFD and stored.
  if (bytes && bytes.length <= Limits.requestMaxBytes && !isUtf8(bytes)) {
    throw invalid('The request body is not valid UTF-8.', [{ path: '', message: 'invalid UTF-8' }]);
  }
  const text = bytes ? bytes.toString('utf8') : raw;
  if (Buffer.byteLength(text, 'utf8') > Limits.requestMaxBytes) {
    throw new HttpProblemError(413, 'PayloadTooLarge', 'Payload too large', `Request bodies are limited to ${Limits.requestMaxBytes} bytes.`);
  }
  const contentType = event.headers?.['content-type'] ?? event.headers?.['Content-Type'];
  if (contentType !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new HttpProblemError(415, 'UnsupportedMediaType', 'Unsupported media type', `Send JSON with content-type application/json, not '${contentType}'.`);
  }
  if (text.trim() === '') throw invalid('The request needs a JSON body.', [{ path: '', message: 'body is empty' }]);
  return parseJsonBody(text);
}

const NO_QUERY = z.strictObject({});

/** A route that takes no body: none, or `{}` (what the console sends), else 400. */
function refuseBody(event: APIGatewayProxyEventV2): undefined {
  if ((event.body ?? '').trim() === '') return undefined;
  validate(z.strictObject({}), parseBody(event), 'body');
  return undefined;
}

/** middy's early answer when the invocation's remaining time runs out. */
const isDeadline = (error: unknown) =>
  error instanceof Error && error.name === 'TimeoutError' && (error.cause as { package?: string } | undefined)?.package === '@middy/core';

/** Wraps a handler: validation before, problem+json on error, opaque 500 for the unexpected. */
export function route<P extends z.ZodType = z.ZodType<Record<string, string>>, Q extends z.ZodType = z.ZodType<Record<string, string>>, B extends z.ZodType = z.ZodType<undefined>>(
  schemas: RouteSchemas<P, Q, B>,
  handler: (input: Input<z.output<P>, z.output<Q>, z.output<B>>) => Promise<HttpResult>,
) {
  const { logger } = container();
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use({
      onError: async (request) => {
        // Out of time (middy answers just before the function's deadline): a retryable 503, not an opaque 500.
        const error = isDeadline(request.error)
          ? new UnavailableError('The request did not finish in time; retry it.', 1, { cause: request.error })
          : request.error;
        const { problem, headers, unexpected } = toProblem(error);
        if (error !== request.error) logger.warn('request ran out of time', { route: request.event.routeKey });
        if (unexpected) logger.error('request failed', { error: request.error as Error, route: request.event.routeKey });
        request.response = {
          statusCode: problem.status,
          headers: { 'content-type': 'application/problem+json', ...headers },
          body: JSON.stringify(problem),
        };
      },
    })
    .handler(async (event, context) => {
      try {
        const params = schemas.params ? validate(schemas.params, event.pathParameters ?? {}, 'path') : {};
        // A route without query parameters or body refuses them rather than ignore what a client meant.
        const query = validate(schemas.query ?? NO_QUERY, event.queryStringParameters ?? {}, 'query');
        const body = schemas.body ? validate(schemas.body, parseBody(event), 'body') : refuseBody(event);
        return await handler({ params, query, body, event, context } as Input<z.output<P>, z.output<Q>, z.output<B>>);
      } finally {
        // At most once a minute per container, and only for topics that lost a race or answered 429;
        // statistics: a failure here never replaces the request's own answer.
        flushAppendContention(container().appendMeter, logger);
      }
    });
}
