// Where the memory database lives: config `memory.db`, else `<state_dir>/memory.db`; a relative
// `memory.db` is inside state_dir.
import path from 'node:path';

export function memoryDbPath(config: { state_dir: string; memory?: { db?: string | null } }): string {
  return path.resolve(config.state_dir, config.memory?.db || 'memory.db');
}
