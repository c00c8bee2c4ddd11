import { translateAwsError } from './errors.js';

/** Runs one store call and turns unabsorbed AWS failures into retryable domain errors. */
export async function call<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateAwsError(error);
  }
}
