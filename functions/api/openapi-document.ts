/** Builds the OpenAPI 3.1 document from the route table and its zod schemas. */
import { z } from 'zod';
import { routes } from './routes.js';
import { ProblemSchema } from './schemas.js';

const schema = (type: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(type, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;

const strip = (value: Record<string, unknown>) => {
  const { $schema: _ignored, ...rest } = value;
  return rest;
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid argument',
  401: 'Missing or wrong credentials',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Throttled; retry after Retry-After seconds',
  503: 'Unavailable; retry after Retry-After seconds',
};

const integer = { type: 'integer', minimum: 0 };
const text = { type: 'string' };
/** Headers of error responses, by status (lib/http/problem.ts sets Retry-After; the authorizer WWW-Authenticate). */
const ERROR_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'WWW-Authenticate': { description: 'The scheme to authenticate with (local runtime: Bearer).', schema: text } },
  409: { 'Retry-After': { description: 'Seconds to wait, when the conflict passes by itself (a topic recently deleted).', schema: integer } },
  429: { 'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: integer } },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: integer } },
};

export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const problem = { $ref: '#/components/schemas/Problem' };
  for (const route of routes) {
    const parameters: unknown[] = [];
    for (const [where, type] of [['path', route.params], ['query', route.query]] as const) {
      if (!type) continue;
      const js = schema(type, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, prop] of Object.entries(js.properties ?? {})) {
        parameters.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: prop });
      }
    }
    const responses: Record<string, unknown> = {
      [String(route.status)]: {
        description: 'Success',
        ...(route.headers
          ? { headers: Object.fromEntries(Object.entries(route.headers).map(([name, description]) => [name, { description, required: true, schema: text }])) }
          : {}),
        ...(route.response ? { content: { 'application/json': { schema: strip(schema(route.response, 'output')) } } } : {}),
      },
    };
    const codes = new Set([...(route.body || route.params || route.query ? [400] : []), ...(route.auth ? [401] : []), ...(route.body ? [413, 415] : []), ...(route.errors ?? [])]);
    for (const code of [...codes].sort()) {
      responses[String(code)] = {
        description: STATUS_TEXT[code] ?? 'Error',
        ...(ERROR_HEADERS[code] ? { headers: ERROR_HEADERS[code] } : {}),
        content: { 'application/problem+json': { schema: problem } },
      };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.entry.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()),
      summary: route.summary,
      ...(route.auth ? {} : { security: [] }),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: strip(schema(route.body, 'input')) } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice',
      version: '1.0.0',
      description: 'Serverless message queue: normal, scheduled, FIFO and transactional messages.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: 'http://127.0.0.1:3000', description: 'Local runtime (npm start)' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
        description: 'A deployed stack: its HTTP API endpoint (stack output)',
        variables: { apiId: { default: 'api-id', description: 'HTTP API id' }, region: { default: 'us-east-1', description: 'AWS Region' } },
      },
    ],
    security: [{ bearer: [] }, { sigv4: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Local runtime: SLUICE_API_TOKEN' },
        sigv4: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'AWS: SigV4 (IAM), service execute-api' },
      },
      schemas: { Problem: strip(schema(ProblemSchema, 'output')) },
    },
    paths,
  };
}
