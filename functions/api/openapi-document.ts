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
        ...(route.response ? { content: { 'application/json': { schema: strip(schema(route.response, 'output')) } } } : {}),
      },
    };
    const codes = new Set([...(route.body || route.params || route.query ? [400] : []), ...(route.auth ? [401] : []), ...(route.body ? [413, 415] : []), ...(route.errors ?? [])]);
    for (const code of [...codes].sort()) {
      responses[String(code)] = { description: STATUS_TEXT[code] ?? 'Error', content: { 'application/problem+json': { schema: problem } } };
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
    },
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
