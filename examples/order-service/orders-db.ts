/**
 * The order service's own database: a JSON file, written atomically (temp
 * file + rename). It stands in for the SQL table a real service would have;
 * what matters is that an order row records the Sluice `transactionId` of its
 * outbox message, so the checker can tell whether the local transaction
 * committed.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface Order {
  orderId: string;
  item: string;
  quantity: number;
  transactionId: string;
  messageId: string;
  createdAt: string;
}

export class OrdersDb {
  private orders: Order[] | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly path: string) {}

  async all(): Promise<Order[]> {
    if (!this.orders) {
      try {
        this.orders = JSON.parse(await readFile(this.path, 'utf8')) as Order[];
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        this.orders = [];
      }
    }
    return this.orders;
  }

  /** The "local transaction": one durable insert. */
  insert(order: Order): Promise<void> {
    const next = this.queue.then(async () => {
      const orders = [...(await this.all()), order];
      await mkdir(dirname(this.path), { recursive: true });
      const temp = `${this.path}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify(orders, null, 2));
      await rename(temp, this.path);
      this.orders = orders;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  async byTransaction(transactionId: string): Promise<Order | undefined> {
    return (await this.all()).find((o) => o.transactionId === transactionId);
  }
}
