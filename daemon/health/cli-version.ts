// doctor's verdict on the installed Claude Code CLI against the versions nightshift was tested on:
// outside that range the stream, hooks and wall may differ (2.1.332 began refusing a bare long
// `sleep`), so it warns. Pure: the `--version` line is data.
import type { CheckFacts } from '../../report/embed.js';

// The oldest and the newest release `npm run compat` passed; the newest is the devDependency pin
// (a test holds the two together). Widen it only with a compat run.
export const CLI_TESTED = { min: '2.1.197', max: '2.1.332' } as const;

const parse = (v: string): number[] | null => {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
};

export function compareVersions(a: string, b: string): number {
  const x = parse(a)!;
  const y = parse(b)!;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

// `said`: the first line `claude --version` printed, e.g. "2.1.332 (Claude Code)".
export function cliVersionCheck(cmd: string, said: string, tested: { min: string; max: string } = CLI_TESTED): CheckFacts {
  const range = `${tested.min} to ${tested.max}`;
  const pin = `npm install -g @anthropic-ai/claude-code@${tested.max}`;
  const v = parse(said)?.join('.');
  if (!v) return { name: 'cli', status: 'warn', detail: `${cmd}: cannot read a version in "${said}" (tested: ${range})`, fix: pin };
  if (compareVersions(v, tested.min) < 0) return { name: 'cli', status: 'warn', detail: `${cmd}: Claude Code ${v} is older than the tested range ${range}`, fix: pin };
  if (compareVersions(v, tested.max) > 0) return { name: 'cli', status: 'warn', detail: `${cmd}: Claude Code ${v} is newer than the tested range ${range}`, fix: `check it first: npm run compat -- --cli ${v} (in a nightshift clone), or ${pin}` };
  return { name: 'cli', status: 'ok', detail: `${cmd}: Claude Code ${v} (tested: ${range})`, fix: null };
}
