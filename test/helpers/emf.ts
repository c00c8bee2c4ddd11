/** The EMF documents (CloudWatch embedded metric format) `emit` writes to stdout or the console, parsed. */
import { vi } from 'vitest';

export function emfDocuments(emit: () => void): Array<Record<string, any>> {
  const lines: string[] = [];
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  const logs = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    emit();
  } finally {
    out.mockRestore();
    logs.mockRestore();
  }
  return lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, any>);
}

/** The same for an asynchronous `emit` (a Lambda handler's invocation). */
export async function emfDocumentsOf(emit: () => Promise<unknown>): Promise<Array<Record<string, any>>> {
  const lines: string[] = [];
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  const logs = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    await emit().catch(() => undefined);
  } finally {
    out.mockRestore();
    logs.mockRestore();
  }
  return lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, any>);
}
