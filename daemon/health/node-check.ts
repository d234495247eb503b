// doctor's verdict on the Node.js that runs nightshift: an end-of-life line gets no security
// releases, so it fails, with the fix. Pure: the table and the date are data, passed in.
import type { CheckFacts } from '../../report/embed.js';
import { counted } from '../../core/words.js';

type Check = CheckFacts;

// Release lines and their end of life (nodejs.org/en/about/previous-releases). A line leaves the
// table only long after its end; a line missing here is newer than this build knows.
export const NODE_LINES: ReadonlyArray<{ line: number; eol: string }> = [
  { line: 18, eol: '2025-04-30' },
  { line: 20, eol: '2026-04-30' },
  { line: 21, eol: '2024-06-01' },
  { line: 22, eol: '2027-04-30' },
  { line: 23, eol: '2025-06-01' },
  { line: 24, eol: '2028-04-30' },
  { line: 25, eol: '2026-06-01' },
  { line: 26, eol: '2029-04-30' },
];
// package.json engines (`>=22`); a test holds the two together.
export const NODE_MIN_LINE = 22;
// The lines the suite runs on (CI: 24, .ci/node-version; 22 while it lives).
export const NODE_TESTED_LINES = [22, 24];
// Warn this long before an end of life, so the upgrade is planned, not forced.
const WARN_DAYS = 90;

const FIX = 'install Node.js 24 LTS (nodejs.org, or your distribution\'s nodesource packages), then reinstall nightshift with it (npm install -g) so better-sqlite3 is built for it';

export function nodeCheck(version: string, now: Date, lines = NODE_LINES): Check {
  const m = /^v?(\d+)\.\d+\.\d+/.exec(version);
  if (!m) return { name: 'node', status: 'warn', detail: `cannot read the Node.js version "${version}"`, fix: FIX };
  const line = Number(m[1]);
  const known = lines.find((l) => l.line === line);
  if (known && now.getTime() >= Date.parse(`${known.eol}T00:00:00Z`)) {
    return { name: 'node', status: 'fail', detail: `node ${version}: Node.js ${line} reached its end of life on ${known.eol} and gets no security fixes`, fix: FIX };
  }
  if (line < NODE_MIN_LINE) return { name: 'node', status: 'fail', detail: `node ${version}: nightshift needs Node.js ${NODE_MIN_LINE} or later (package.json engines)`, fix: FIX };
  if (!known) return { name: 'node', status: 'warn', detail: `node ${version}: a release line this build does not know (tested on ${NODE_TESTED_LINES.join(' and ')})`, fix: 'run nightshift on Node.js 24 LTS, or upgrade nightshift' };
  const left = Math.ceil((Date.parse(`${known.eol}T00:00:00Z`) - now.getTime()) / 86_400_000);
  if (line % 2 === 1) return { name: 'node', status: 'warn', detail: `node ${version}: an odd (short-lived) line, end of life ${known.eol}; nightshift is tested on ${NODE_TESTED_LINES.join(' and ')}`, fix: FIX };
  if (left <= WARN_DAYS) return { name: 'node', status: 'warn', detail: `node ${version}: Node.js ${line} reaches its end of life on ${known.eol} (in ${counted(left, 'day')})`, fix: FIX };
  return { name: 'node', status: 'ok', detail: `node ${version} (Node.js ${line}, supported until ${known.eol})`, fix: null };
}
