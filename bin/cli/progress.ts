/** A one-line progress bar on stderr, redrawn at most ten times a second; silent unless stderr is a terminal. */
export class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private done = 0;
  private failed = 0;

  constructor(
    private readonly total: number | undefined,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly enabled = Boolean(process.stderr.isTTY),
  ) {}

  update(done: number, failed: number) {
    this.done = done;
    this.failed = failed;
    const now = Date.now();
    if (now - this.lastDraw >= 100) this.draw(now);
  }

  finish() {
    if (!this.enabled) return;
    this.draw(Date.now());
    this.stream.write('\n');
  }

  private draw(now: number) {
    if (!this.enabled) return;
    this.lastDraw = now;
    const seconds = Math.max(0.001, (now - this.started) / 1000);
    const rate = Math.round(this.done / seconds);
    const failed = this.failed ? `  ${this.failed} failed` : '';
    let line: string;
    if (this.total) {
      const width = 30;
      const ratio = Math.min(1, this.done / this.total);
      const filled = Math.round(ratio * width);
      line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${Math.floor(ratio * 100)}%  ${rate} msg/s${failed}`;
    } else {
      line = `${this.done} sent  ${rate} msg/s${failed}`;
    }
    this.stream.write(`\r\x1b[2K${line}`);
  }
}
