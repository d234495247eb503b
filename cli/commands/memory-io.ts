// What `nightshift memory` and its learning verbs share: the flags and the terminal they write to.
import type { Readable } from 'node:stream';
import type { Logger } from '../../logs/logger.js';

export type MemoryFlags = {
  json?: boolean; limit?: string; explain?: boolean; 'include-faded'?: boolean; source?: string; category?: string; tags?: string; speaker?: string;
  'valid-from'?: string; 'as-of'?: string; agent?: string;
};

export type MemoryIo = {
  out: (text: string) => void; // one block on stdout; a newline is added
  err: (text: string) => void; // raw stderr
  stdin: Readable;
  stderrIsTTY: boolean;
  // `forget --approve` needs a human at a terminal: a session's tools never have one.
  stdinIsTTY?: boolean;
  env: NodeJS.ProcessEnv;
  logger: Logger;
};
