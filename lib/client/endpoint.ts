/** What an endpoint URL says about how to reach it. */

/** `https://<api-id>.execute-api.<region>.amazonaws.com[/stage]`: an API Gateway HTTP API. */
const EXECUTE_API = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/;
/** `https://<url-id>.lambda-url.<region>.on.aws`: a Lambda function URL (docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html). */
const FUNCTION_URL = /\.lambda-url\.([a-z0-9-]+)\.on\.aws$/;

const hostname = (endpoint: string): string | undefined => {
  try {
    return new URL(endpoint).hostname;
  } catch {
    return undefined;
  }
};

/**
 * The region of an `execute-api` endpoint or a Lambda function URL
 * (`https://<url-id>.lambda-url.<region>.on.aws`), if the URL is one.
 */
export function regionFromEndpoint(endpoint: string): string | undefined {
  const host = hostname(endpoint) ?? '';
  return EXECUTE_API.exec(host)?.[1] ?? FUNCTION_URL.exec(host)?.[1];
}

/** True for endpoints that AWS serves (API Gateway, Lambda function URLs) and that therefore want SigV4. */
export const isAwsEndpoint = (endpoint: string) => {
  const host = hostname(endpoint);
  return host !== undefined && (/\.amazonaws\.com(?:\.cn)?$/.test(host) || FUNCTION_URL.test(host));
};

/**
 * The SigV4 signing name for an endpoint: `lambda` for a function URL (the default
 * deployment), `execute-api` otherwise (an HTTP API, or a custom domain in front of one).
 */
export const signingServiceOf = (endpoint: string): 'lambda' | 'execute-api' => (FUNCTION_URL.test(hostname(endpoint) ?? '') ? 'lambda' : 'execute-api');
