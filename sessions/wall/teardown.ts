// What a guest holds open (its folder, cell, endpoints, descriptors), closed in the reverse of the
// order it was made. A step that fails is logged and the rest still close: a session's end must
// not leave a listener or a cgroup behind because another one failed.
import type { Logger } from '../../logs/logger.js';

type Step = () => Promise<void> | void;

// The steps to undo a guest, last made first undone. Closing twice undoes nothing twice.
export class Teardown {
  private readonly steps: Step[] = [];

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly redact: (text: string) => string,
  ) {}

  add(step: Step): void {
    this.steps.push(step);
  }

  async close(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        this.log.warn({ event: 'guest_close_failed', err }, `closing a session endpoint failed: ${this.redact((err as Error)?.message ?? String(err))}`);
      }
    }
  }
}
