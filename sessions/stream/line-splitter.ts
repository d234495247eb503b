// Splits a byte stream into lines as it arrives. A line longer than maxLine is cut off and
// reported as garbage rather than held in memory without bound.
export class LineSplitter {
  private buf = '';
  private overflow = false;
  constructor(private readonly maxLine = 32 * 1024 * 1024) {}

  push(chunk: string, onLine: (line: string, truncated: boolean) => void): void {
    let data = this.buf + chunk;
    let nl: number;
    while ((nl = data.indexOf('\n')) !== -1) {
      const line = data.slice(0, nl);
      data = data.slice(nl + 1);
      onLine(line, this.overflow);
      this.overflow = false;
    }
    if (data.length > this.maxLine) {
      this.overflow = true;
      data = '';
    }
    this.buf = data;
  }

  // The unterminated tail, if any, at end of stream.
  end(onLine: (line: string, truncated: boolean) => void): void {
    if (this.buf.length || this.overflow) onLine(this.buf, this.overflow);
    this.buf = '';
    this.overflow = false;
  }
}
