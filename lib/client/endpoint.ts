/** What an endpoint URL says about how to reach it. */

/**
 * The region of an `execute-api` endpoint
 * (`https://<api-id>.execute-api.<region>.amazonaws.com[/stage]`), if the URL is one.
 */
export function regionFromEndpoint(endpoint: string): string | undefined {
  try {
    return /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(new URL(endpoint).hostname)?.[1];
  } catch {
    return undefined;
  }
}

/** True for endpoints that API Gateway serves (and that therefore want SigV4). */
export const isAwsEndpoint = (endpoint: string) => {
  try {
    return /\.amazonaws\.com(?:\.cn)?$/.test(new URL(endpoint).hostname);
  } catch {
    return false;
  }
};
