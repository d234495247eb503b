// doctor's check of installed units: what `systemd install` checks before writing (daemon/unit-reach.ts),
// read back from the nightshift.service in place: its User=, the node and bin its ExecStart= names,
// and the CLI on its PATH. A site or install that moved since the install shows here.
import fs from 'node:fs';
import type { Config } from '../../config/schema.js';
import { installedUnitPath } from '../systemd.js';
import { unitReach } from '../unit-reach.js';
import type { CheckFacts as Check } from '../../report/embed.js';

const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail, fix: null });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });

// Pure: the words of a unit's ExecStart= as unitWord writes them ("..." with \" and \\, $$, %%).
export function execWords(text: string): string[] {
  const line = /^[ \t]*ExecStart[ \t]*=[ \t]*(.*)$/m.exec(text)?.[1] ?? '';
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]).replace(/\$\$/g, '$').replace(/%%/g, '%'));
}

export function unitsCheck(c: Config, unitFile: string): Check[] {
  let text: string;
  try {
    text = fs.readFileSync(unitFile, 'utf8');
  } catch {
    return [];
  }
  const user = /^[ \t]*User[ \t]*=[ \t]*(\S+)/m.exec(text)?.[1] ?? 'root';
  // node, its flags (core/node-flags.ts), then the bin.
  const [node, ...rest] = execWords(text);
  const bin = rest.find((w) => !w.startsWith('-'));
  if (!node || !bin) return [fail('units', `${unitFile} has no ExecStart= with node and nightshift's bin`, 'nightshift systemd install --user USER again')];
  const problems = unitReach(c, user, node, installedUnitPath(unitFile) ?? '', bin);
  if (!problems.length) return [ok('units', `${unitFile}: ${user} can run ${bin} with ${node}, and owns the site`)];
  return [fail('units', `${unitFile}: ${problems.join(' | ')}`, 'each problem names its fix; then nightshift systemd install --user USER again')];
}
