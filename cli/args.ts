// The command line as data: every option, which commands take which, how many arguments each
// takes, and node's parser errors said in our words. Pure; main.ts dispatches on what it returns.
import { parseArgs } from 'node:util';
import { UsageError } from '../core/errors.js';
import { didYouMean } from '../core/suggest.js';
import { counted } from '../core/words.js';

export type Flags = {
  config?: string; json?: boolean; force?: boolean; all?: boolean; date?: string; limit?: string; help?: boolean; version?: boolean;
  at?: string; timeout?: string; user?: string; 'on-calendar'?: string; prefix?: string; unit?: string;
  source?: string; category?: string; tags?: string; speaker?: string; explain?: boolean; 'include-faded'?: boolean; alert?: boolean;
  'valid-from'?: string; 'as-of'?: string;
  agent?: string; outcome?: string; since?: string; transcript?: boolean; days?: string; follow?: boolean;
  'environment-file'?: string; remote?: string; fix?: boolean; port?: string; serve?: boolean; timeline?: boolean; fleet?: boolean;
  confidence?: string; note?: string; due?: string; solo?: boolean; seed?: string; steps?: string; approve?: string; weight?: string;
};

const OPTIONS = {
  config: { type: 'string' },
  port: { type: 'string' },
  serve: { type: 'boolean' },
  json: { type: 'boolean' },
  force: { type: 'boolean' },
  all: { type: 'boolean' },
  date: { type: 'string' },
  limit: { type: 'string' },
  at: { type: 'string' },
  timeout: { type: 'string' },
  user: { type: 'string' },
  'on-calendar': { type: 'string' },
  prefix: { type: 'string' },
  unit: { type: 'string' },
  source: { type: 'string' },
  category: { type: 'string' },
  tags: { type: 'string' },
  speaker: { type: 'string' },
  explain: { type: 'boolean' },
  'include-faded': { type: 'boolean' },
  'valid-from': { type: 'string' },
  'as-of': { type: 'string' },
  confidence: { type: 'string' },
  note: { type: 'string' },
  due: { type: 'string' },
  solo: { type: 'boolean' },
  seed: { type: 'string' },
  steps: { type: 'string' },
  approve: { type: 'string' },
  weight: { type: 'string' },
  agent: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  transcript: { type: 'boolean' },
  days: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  timeline: { type: 'boolean' },
  fleet: { type: 'boolean' },
  'environment-file': { type: 'string' },
  remote: { type: 'string' },
  fix: { type: 'boolean' },
  alert: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export const ALLOWED: Record<string, Array<keyof Flags>> = {
  run: ['config', 'environment-file', 'json', 'force'],
  agents: ['config', 'environment-file', 'json'],
  budget: ['config', 'environment-file', 'json', 'date', 'days'],
  sessions: ['config', 'environment-file', 'json', 'limit', 'agent', 'outcome', 'since'],
  show: ['config', 'environment-file', 'json', 'transcript'],
  logs: ['config', 'environment-file', 'follow'],
  tick: ['config', 'environment-file', 'json'],
  fires: ['config', 'environment-file', 'json', 'days', 'agent', 'timeline', 'prefix', 'fleet'],
  next: ['config', 'environment-file', 'json', 'at', 'prefix'],
  status: ['config', 'environment-file', 'json', 'prefix'],
  lock: ['config', 'environment-file', 'timeout'],
  daemon: ['config', 'environment-file'],
  systemd: ['config', 'environment-file', 'user', 'on-calendar', 'prefix'],
  alert: ['config', 'environment-file', 'unit'],
  doctor: ['config', 'environment-file', 'json', 'alert', 'fix', 'prefix'],
  memory: ['config', 'environment-file', 'json', 'limit', 'source', 'category', 'tags', 'speaker', 'explain', 'include-faded', 'valid-from', 'as-of', 'agent', 'confidence', 'note', 'due', 'solo', 'seed', 'steps', 'approve', 'weight'],
  mcp: ['config', 'environment-file'],
  state: ['config', 'environment-file', 'json', 'agent'],
  anneal: ['config', 'environment-file', 'json', 'agent'],
  rehearse: ['config', 'environment-file', 'json', 'port', 'serve'],
  hold: ['config', 'environment-file', 'json', 'all'],
  db: ['config', 'environment-file', 'json'],
  web: ['config', 'environment-file', 'port', 'prefix'],
  hook: ['config'],
  init: ['remote'],
};

// How many arguments each command takes after its name ([min, max]); more are refused, not ignored.
const ARITY: Record<string, [number, number]> = {
  run: [1, 1], agents: [0, 0], budget: [0, 0], sessions: [0, 0], show: [1, 1], logs: [0, 1], tick: [0, 0], fires: [0, 0], next: [0, 0], status: [0, 0],
  daemon: [0, 0], rehearse: [0, 1], systemd: [1, 1], hold: [1, 2], db: [1, 1], alert: [0, 0], doctor: [0, 0], mcp: [0, 0], state: [0, 0], web: [0, 0],
};

export function parse(argv: string[]): { command: string | null; positionals: string[]; flags: Flags } {
  // `nightshift help [command]` is `nightshift [command] --help`, as git and npm take it.
  if (argv[0] === 'help') argv = [...argv.slice(1, 2), '--help'];
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(usageProblem(err as Error & { code?: string }, argv));
  }
  const [command = null, ...positionals] = parsed.positionals;
  const flags = parsed.values as Flags;
  if (command && !flags.help) {
    const allowed = ALLOWED[command];
    if (!allowed) throw new UsageError(`Unknown command \`${command}\`.${didYouMean(command, Object.keys(ALLOWED))} Commands: ${Object.keys(ALLOWED).join(', ')}. See \`nightshift --help\`.`);
    for (const k of Object.keys(flags) as Array<keyof Flags>) {
      if (flags[k] !== undefined && !allowed.includes(k)) throw new UsageError(`\`nightshift ${command}\` does not take --${k}.${didYouMean(k, allowed, (o) => `--${o}`)} See \`nightshift ${command} --help\`.`);
    }
    const arity = ARITY[command];
    if (arity && positionals.length > arity[1]) {
      const extra = positionals.slice(arity[1]).map((p) => `\`${p}\``).join(' ');
      throw new UsageError(`\`nightshift ${command}\` takes ${arity[1] === 0 ? 'no arguments' : `at most ${arity[1]} argument${arity[1] > 1 ? 's' : ''}`}, got ${extra} too. See \`nightshift ${command} --help\`.`);
    }
  }
  return { command, positionals, flags };
}

// Node's parser errors, said in our words (the option, what is wrong, what was meant).
function usageProblem(err: Error & { code?: string }, argv: string[]): string {
  const command = argv.find((a) => !a.startsWith('-'));
  const where = command && ALLOWED[command] ? ` for \`nightshift ${command}\`` : '';
  const known = command && ALLOWED[command] ? ALLOWED[command] : (Object.keys(OPTIONS) as string[]);
  const name = /'(-{1,2}[^' =]+)/.exec(err.message)?.[1] ?? '';
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `Unknown option \`${name}\`${where}.${didYouMean(name.replace(/^-+/, ''), known, (o) => `--${o}`)} See \`nightshift ${command && ALLOWED[command] ? `${command} ` : ''}--help\`.`;
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const opt = name.replace(/^-+/, '');
    const def = (OPTIONS as Record<string, { type: string }>)[opt];
    return def?.type === 'boolean' ? `\`--${opt}\` takes no value${where}.` : `\`--${opt}\` needs a value${where}, as in \`--${opt} VALUE\`.`;
  }
  return `${err.message}. See \`nightshift --help\`.`;
}

// The one argument a command takes (`run <agent>`, `show <session-id>`).
export function positional(positionals: string[], command: string, what: string): string {
  if (positionals.length !== 1) throw new UsageError(`Expected \`nightshift ${command} <${what}>\`, got ${counted(positionals.length, 'argument')}. See \`nightshift ${command} --help\`.`);
  return positionals[0];
}

