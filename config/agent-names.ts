// The agents in agents_dir by name, for "did you mean": a light module, so `sessions` and `show`
// need not load config validation.
import fs from 'node:fs';

export function agentNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3));
  } catch {
    return [];
  }
}
