// The capture's store, opened ahead: while the CLI exits after its result line (~35 ms in which the
// supervisor waits), not after. It is handed to the capture once; one the capture never took (it
// failed before it opened its store) is closed, so a long-running daemon leaks no connection.
export type Ahead<S extends { close(): void }> = {
  // Starts opening it (once).
  start(): void;
  // The store for the capture: the one opened ahead, else a fresh one.
  take(): Promise<S>;
  // After the capture: closes one that was opened and never taken.
  drop(): Promise<void>;
};

export function openAhead<S extends { close(): void }>(open: () => Promise<S>): Ahead<S> {
  let ahead: Promise<S> | null = null;
  let taken = false;
  return {
    start() {
      if (ahead) return;
      ahead = open();
      // A failure is the capture's to meet (it spools); never unhandled meanwhile.
      ahead.catch(() => {});
    },
    take() {
      taken = true;
      return ahead ?? open();
    },
    async drop() {
      if (ahead && !taken) await ahead.then((s) => s.close(), () => {});
    },
  };
}
