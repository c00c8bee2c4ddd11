import { json, route } from '../commons/http.js';
import { openApiDocument } from './openapi-document.js';

let document: Record<string, unknown> | undefined;

/** GET /v1/openapi.json: generated once per container from the same schemas the handlers validate with. */
export const handler = route({}, async () => json(200, (document ??= openApiDocument())));
