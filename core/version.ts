// nightshift's own version, from its package.json (the build sits in dist/, two levels below).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export function version(): string {
  const pkg = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'));
  return pkg.version;
}
