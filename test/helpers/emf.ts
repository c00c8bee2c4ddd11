/** The EMF documents (CloudWatch embedded metric format) `emit` writes to stdout or the console, parsed. */
import { vi } from 'vitest';

/** Captures what is written to stdout and the console while `emit` runs (awaited when it returns a promise). */
function captured<T>(emit: () => T, done: (lines: string[]) => void): T {
  const lines: string[] = [];
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  const logs = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  const restore = () => {
    out.mockRestore();
    logs.mockRestore();
    done(lines);
  };
  let result: T;
  try {
    result = emit();
  } catch (error) {
    restore();
    throw error;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}

const documentsIn = (lines: string[]): Array<Record<string, any>> =>
  lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, any>);

export function emfDocuments(emit: () => void): Array<Record<string, any>> {
  let docs: Array<Record<string, any>> = [];
  captured(emit, (lines) => (docs = documentsIn(lines)));
  return docs;
}

/** The same for an asynchronous `emit` (a Lambda handler's invocation); a rejection is left to the caller's `emit`. */
export async function emfDocumentsOf(emit: () => Promise<unknown>): Promise<Array<Record<string, any>>> {
  let docs: Array<Record<string, any>> = [];
  await captured(() => emit().catch(() => undefined), (lines) => (docs = documentsIn(lines)));
  return docs;
}
