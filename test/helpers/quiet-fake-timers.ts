/** Fake timers for each test of the file, with console.error silenced (the local stand-ins log failed runs). */
import { afterEach, beforeEach, vi } from 'vitest';

export function useQuietFakeTimers(): void {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
}
