// A step's log in memory, up to a cap: what comes after the cap is counted, not kept, and a note
// saying so ends the log.

export const DEFAULT_MAX_LOG_BYTES = 16 * 1024 * 1024;

export class CappedLog {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  private readonly notes: string[] = [];

  constructor(private readonly maxBytes: number = DEFAULT_MAX_LOG_BYTES) {}

  push(chunk: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (room >= chunk.length) {
      this.chunks.push(chunk);
      this.kept += chunk.length;
      return;
    }
    if (room > 0) {
      this.chunks.push(chunk.subarray(0, room));
      this.kept += room;
    }
    this.dropped += chunk.length - Math.max(room, 0);
  }

  /** A line of our own, after the step's output (never counted against the cap). */
  note(line: string): void {
    this.notes.push(line);
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  bytes(): Uint8Array {
    const tail: string[] = [];
    if (this.dropped > 0) tail.push(`pipewright: log truncated at ${this.maxBytes} bytes; ${this.dropped} more bytes were dropped`);
    tail.push(...this.notes);
    if (tail.length === 0) return Buffer.concat(this.chunks, this.kept);
    const last = this.chunks.at(-1);
    const newline = last && last.length > 0 && last[last.length - 1] !== 0x0a ? "\n" : "";
    return Buffer.concat([...this.chunks, Buffer.from(`${newline}${tail.map((line) => `${line}\n`).join("")}`)]);
  }
}
