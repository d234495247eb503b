// The configuration reference, read from the zod schema itself: the JSON Schema an editor checks
// nightshift.yaml with, and the key / type / default / description rows of docs/configuration.md.
// The descriptions live here, not in the schema: `.describe()` would clone ~120 schemas at every
// start of every command, for text only the generator reads. A key without one is a problem.
import { z } from 'zod';
import { ConfigSchema } from './schema.js';

// Fields the schema takes as `unknown` and parses itself (durations, sizes, day and hour lists):
// JSON Schema cannot see through the transform, so the kind says what a value may be written as.
type Kind = 'duration' | 'size' | 'days' | 'hours' | 'cron' | 'pids' | 'memory_bound';
export type KeyDoc = string | { kind: Kind; text: string };

type Json = { [k: string]: unknown };
const numberOrString = (what: string): Json => ({ anyOf: [{ type: 'string' }, { type: 'number', minimum: 0 }], examples: [what] });
const KINDS: Record<Kind, { type: string; schema: Json }> = {
  duration: { type: 'duration (`90s`, `10m`, `1h`; a number is seconds)', schema: numberOrString('10m') },
  size: { type: 'size (`512M`, `50MB`, `2G`; a number is bytes)', schema: numberOrString('512M') },
  days: {
    type: 'days (`mon-fri`, `"mon,wed"`, `[sun, 6]`)',
    schema: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0, maximum: 6 }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0, maximum: 6 }] } }] },
  },
  hours: {
    type: 'hours (`14-21`, `"9,14-16"`, `[10]`)',
    schema: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0, maximum: 23 }, { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0, maximum: 23 }] } }] },
  },
  cron: { type: 'cron expression, or a list of them', schema: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }] } },
  pids: { type: 'whole number, or `off`', schema: { anyOf: [{ type: 'integer', exclusiveMinimum: 0 }, { const: 'off' }] } },
  memory_bound: { type: 'size (at least `16M`), or `off`', schema: { anyOf: [{ type: 'string' }, { type: 'number', minimum: 16 * 1024 * 1024 }] } },
};

// One line per key, dotted; `dispatch[]` is each rule, `<model>` any model name.
export const KEY_DOCS: Record<string, KeyDoc> = {
  vault: "The agent's working tree, the cwd of every session; a git work tree with a remote when `git.enabled`.",
  sandbox: 'The wall around every session: `bwrap`, or `none` (explicitly; `doctor` warns).',
  network: 'Hosts sessions may reach through the egress proxy: `none`, a list (`[api.github.com, "*.wikipedia.org"]`) or `open` (any public host; `doctor` warns). An agent\'s own `network:` wins.',
  session_user: 'Run by root, walled sessions run as this user (made by `init` and `systemd install` where missing). Never `root` or `nobody`.',
  vaults: 'A vault of its own for an agent, by its name: `{ researcher: ../research-vault }` (a folder; a git work tree with a remote when `git.enabled`). Its sessions work there, and run beside sessions in other vaults (`sessions.max_concurrent`); sessions sharing a vault take turns.',
  sessions: 'Sessions at once on this host.',
  'sessions.max_concurrent': 'How many sessions run at once (a tick starts as many due agents; a run by hand counts). One per agent, and one per vault at a time. 1: one session at a time, as a single run lock.',
  state_dir: 'The SQLite ledger, the memory store, the outbox and the locks.',
  log_dir: 'Daily log files (`YYYY-MM-DD.log`) and `transcripts/`.',
  agents_dir: 'One `<name>.md` per agent.',
  claude: 'The Claude Code CLI and how a session runs it.',
  'claude.command': 'Path or name of the Claude Code CLI.',
  'claude.model': 'The model, unless the agent names its own.',
  'claude.max_turns': 'Turns a session may take, unless the agent says otherwise.',
  'claude.timeout': { kind: 'duration', text: 'Wall-clock watchdog: past it the session ends `timeout`.' },
  'claude.idle_timeout': { kind: 'duration', text: 'No stream output from the CLI, and no bytes from the API, for this long: the session ends `stalled`.' },
  'claude.kill_grace': { kind: 'duration', text: 'After SIGINT, before SIGTERM and SIGKILL of every process the session started.' },
  'claude.permission_mode': 'The CLI\'s permission mode, or a list of allowed tools. The CLI refuses `bypassPermissions` as root: run unwalled as root, an agent without `allowed_tools` is refused.',
  'claude.extra_args': 'More arguments for every `claude -p`.',
  'claude.project_settings': "`true`: the CLI loads the vault's `.claude/`, `.mcp.json` and `CLAUDE.md`, which sessions can write (`doctor` warns).",
  'claude.tools': 'The built-in tool set (`--tools`): a list of tool names, or `default` for all of the CLI\'s. An agent with `allowed_tools` is offered only the built-in tools its rules name.',
  'claude.api_base': "Where the session's API proxy sends calls (`ANTHROPIC_BASE_URL` in the supervisor's environment wins).",
  budget: 'What a day may spend, metered at the API proxy.',
  'budget.timezone': 'What "a day" means (an IANA zone); also the zone of times on `status` and `sessions`.',
  'budget.max_sessions_per_day': 'Sessions a day, all agents together. Every session started counts, a failed one too (an error that cost $0 included).',
  'budget.max_usd_per_day': 'The day\'s cap in USD, metered at the proxy.',
  'budget.max_usd_per_session': 'What a session reserves at most; the proxy holds it (outcome `budget`).',
  'budget.min_session_usd': 'Less than this left today: no session starts (exit 75).',
  'budget.prices': "The meter's prices in USD per million tokens, by model id or a part of one (a gateway's names included), over the built-in table (`budget/pricing.ts`).",
  'budget.prices.<model>.input': 'Input tokens.',
  'budget.prices.<model>.output': 'Output tokens.',
  'budget.prices.<model>.cache_write': 'Cache writes (5 minutes).',
  'budget.prices.<model>.cache_write_1h': 'Cache writes (1 hour).',
  'budget.prices.<model>.cache_read': 'Cache reads.',
  'budget.max_window_utilization': "A subscription's 5-hour and 7-day usage windows: past this share, no session starts.",
  dispatch: 'Ordered rules: the first rule due and within its limits wins.',
  'dispatch[].agent': 'The agent the rule runs.',
  'dispatch[].days': { kind: 'days', text: 'Days it is due: `sun`..`sat` (or in full), or 0-6 with 0 = Sunday; ranges like `mon-fri`. Left out: every day.' },
  'dispatch[].hours': { kind: 'hours', text: 'Hours it is due, 0-23 in `budget.timezone`; ranges like `14-21`. Left out: every hour.' },
  'dispatch[].min_interval': { kind: 'duration', text: "Since this agent's last session began." },
  'dispatch[].max_runs_per_day': 'Sessions of this agent a day (the agent file\'s `max_runs_per_day` when left out). Every session started counts, a failed one too (an error that cost $0 included).',
  git: "The vault's git: pull before, commit and push after every session.",
  'git.enabled': 'The vault is a git work tree with a remote.',
  'git.remote': 'The remote pulled from and pushed to.',
  'git.branch': "The branch pushed to; left out, the vault's HEAD.",
  'git.lock_file': 'The host-wide git lock (see `nightshift lock`); left out, `git.lock` in `state_dir`.',
  'git.lock_timeout': { kind: 'duration', text: 'How long to wait for the git lock.' },
  'git.timeout': { kind: 'duration', text: 'Each git command; past it, git and its children are ended.' },
  'git.push_retries': 'A rejected push is rebased and retried this often.',
  'git.author_name': "Author of the session commits, when the vault's git names none.",
  'git.author_email': "Author email of the session commits, when the vault's git names none.",
  daemon: 'Only for `nightshift daemon` (hosts without systemd timers).',
  'daemon.schedule': { kind: 'cron', text: "When the daemon ticks (`doctor` warns of a rule it never reaches)." },
  'daemon.shutdown_grace': { kind: 'duration', text: 'On SIGTERM, how long a running session may finish before it is ended.' },
  loop: 'The loop detector over the tool calls.',
  'loop.max_repeats': 'The same tool call this often in the window is a loop.',
  'loop.window': 'The tool calls the detector looks back over.',
  'loop.cycle_repeats': 'A short cycle (A B A B A B) repeated this often is a loop.',
  discord: 'Reports; the webhook itself is `DISCORD_WEBHOOK_URL` (environment), never the config.',
  'discord.api_base': 'Where reports are posted: a proxy, or a loopback imitation in tests.',
  'discord.timeout': { kind: 'duration', text: 'All Discord traffic of one start, retries included.' },
  'discord.username': "The name the reports are posted under; left out, the webhook's own.",
  webhook: 'A second report channel beside Discord; the URL itself is `NIGHTSHIFT_WEBHOOK_URL` (environment: it may carry a token), never the config. Every report goes there too, through the same outbox.',
  'webhook.format': '`json`: POSTs `{source, event, key, title, agent, outcome, summary, cost, fields, at, host}`; `ntfy`: POSTs the text to the topic URL with `Title`, `Priority` and `Tags` headers. Run `systemd install` again after changing it (the alarm script reads a copy).',
  'webhook.timeout': { kind: 'duration', text: 'All webhook traffic of one start, retries included.' },
  alerts: 'What `nightshift doctor` fails on.',
  'alerts.max_silence': { kind: 'duration', text: 'The last ok session is older than this.' },
  'alerts.max_consecutive_failures': 'This many sessions in a row did not end ok.',
  backoff: 'Holds: a failing or rate-limited agent waits instead of failing on every tick.',
  'backoff.after_failures': 'Failures in a row before the agent is backed off.',
  'backoff.base': { kind: 'duration', text: 'The first wait after the last failure; it doubles with each further one.' },
  'backoff.max': { kind: 'duration', text: 'The longest wait, for failures and rate limits.' },
  'backoff.rate_limit': { kind: 'duration', text: 'The wait after a rate limit that gave no reset time; it doubles with each in a row.' },
  memory: 'The memory store.',
  'memory.db': 'The store\'s SQLite file; left out, `memory.db` in `state_dir`. Never in a folder a session writes.',
  'memory.scope': "`agent`: a session reads its agent's and the shared memories; `shared`: all, as one identity.",
  'memory.embeddings': 'The offline vector arm: `auto` (none, as measured), `none`, `use` (an optional package); Gemini takes over when `GEMINI_API_KEY` is set.',
  monitor: "A dead-man's check outside the host (the healthchecks.io convention): silence itself alerts.",
  'monitor.ping_url': 'Each tick POSTs `<url>/start`, then `<url>` on success or `<url>/fail` with the reason; never logged. Run `systemd install` again after changing it (the alarm script reads a copy).',
  'monitor.ping_timeout': { kind: 'duration', text: 'How long each ping may wait; a ping never fails or blocks the tick.' },
  fleet: 'Several hosts under one budget (docs/fleet.md): only when the env file names `NIGHTSHIFT_DATABASE_URL` (a PostgreSQL; never in this file). The day\'s reservations and the fires\' claims are shared there; each host keeps its own ledger, fires and memory.',
  'fleet.host': 'This host\'s name in the fleet, in its claims and reservations (default: the machine\'s hostname).',
  'fleet.grace': { kind: 'duration', text: 'What a session\'s shared reservation outlives its `timeout` and `kill_grace` by: past it, a dead host\'s reservation gives the day its money back.' },
  'fleet.lease': { kind: 'duration', text: 'A fire\'s claim\'s lease on the database\'s clock, renewed by this host\'s heartbeat (every quarter of it) while it works: a dead host\'s claim is settled `crashed` and its agent free this long after its last beat.' },
  'fleet.max_concurrent': 'The sessions the whole fleet runs at once, counted by its live claims; a fire past it is skipped, naming the bound (default: none, each host\'s `sessions.max_concurrent` alone). A run by hand takes no claim and is not bound by it.',
  'fleet.connect_timeout': { kind: 'duration', text: 'How long a tick waits to reach the fleet\'s database before it fails closed (exit 69, no session); `status`, the page, `fires --fleet` and `doctor` also wait no longer than this for each answer.' },
  telemetry: 'OpenTelemetry traces, one per fire, from the fire down to each API request, tool call and memory operation (docs/observability.md). Off until `otlp_endpoint` is set.',
  'telemetry.otlp_endpoint': 'The collector\'s OTLP/HTTP base URL (`http://127.0.0.1:4318`; `/v1/traces` is added). Its headers (a token) come from `NIGHTSHIFT_OTLP_HEADERS=name=value,...` in the env file.',
  'telemetry.capture_content': 'Agents whose prompt, result, tool input and memory text go into their spans (redacted); no content for the others.',
  'telemetry.max_queue_size': 'Spans held for export at most; past it they are dropped and counted in the fire\'s row.',
  'telemetry.export_timeout': { kind: 'duration', text: 'How long one export request to the collector may take.' },
  'telemetry.flush_timeout': { kind: 'duration', text: 'The most the process waits before it exits, once its fires\' results and rows are out, for their spans to reach the collector; what has not is counted dropped in the fire\'s row.' },
  'memory.updates': 'Two memories the same but for one value (a name, number, place, date) are an update: the later-valid one is current, the older answers "as of" before the change (docs/memory.md). `false` restores plain merging.',
  'memory.dream_after': 'A tick with nothing due dreams once this many observations arrived since the last dream.',
  'memory.dream_every': { kind: 'duration', text: '...or once this long passed since the last dream, with anything new observed.' },
  'memory.learning': 'The learning layer.',
  'memory.learning.wander_jump': "`wander`'s rate of jumps to an overdue memory.",
  'memory.learning.fade_retrievability': 'A dream fades memories whose retrievability is below this...',
  'memory.learning.fade_salience': '...and whose salience is below this.',
  'memory.gate': "The prediction-error gate on observe: similarity to the nearest memory.",
  'memory.gate.merge': 'At or above this, an observation strengthens the existing memory.',
  'memory.gate.link': 'At or above this (and below `merge`), a new memory linked `relates_to`; below, a novel one.',
  'memory.forget_similarity': 'A near copy of a forgotten claim at or above this similarity is refused too.',
  'memory.recall': 'Recall weights (`memory/recall/rank.ts`).',
  'memory.recall.outdated': "The share of its score a possibly-outdated memory keeps in its writer's view (a session's update of a shared memory it may not end).",
  'memory.recall.rrf_k': 'Reciprocal-rank constant: small trusts the top ranks more.',
  'memory.recall.lexical': 'Weight of the BM25 list.',
  'memory.recall.common': 'Query terms in more than this share of observations are dropped while rarer ones remain.',
  'memory.recall.vector': 'Weight of the vector list.',
  'memory.recall.seeds': 'How many of the best fused results spread activation.',
  'memory.recall.hops': 'How far activation spreads over edges.',
  'memory.recall.decay': 'Activation kept per hop.',
  'memory.recall.activation': 'Weight of received activation in the final score.',
  'memory.recall.recency': 'Weight of recency in the final score.',
  'memory.recall.half_life_days': 'Recency halves over this many days.',
  'memory.recall.salience': 'Weight of salience in the final score.',
  'memory.recall.speaker': 'A query naming a known speaker: what another speaker said, not about them, loses this share of its score.',
  'memory.recall.asking': 'A memory most of whose sentences are questions loses this share of its score (it asks more than it tells).',
  'memory.recall.period': 'A query naming a date or a month of a year (`on October 13, 2023`, `in July 2023`, `2023-10-13`): a memory begun outside it loses this share of its score.',
  'memory.recall.link_cap': 'Rare-word (`shares`) links a memory may have; 0: off.',
  'memory.recall.link_rare': 'A word in at most this share of observations is rare enough to link by.',
  'memory.recall.edges': 'How well each edge type carries activation.',
  'memory.recall.edges.supports': 'A `supports` edge.',
  'memory.recall.edges.contradicts': 'A `contradicts` edge.',
  'memory.recall.edges.abstracts': 'An `abstracts` edge (a dream\'s abstraction).',
  'memory.recall.edges.relates_to': 'A `relates_to` edge.',
  'memory.recall.edges.supersedes': 'A `supersedes` edge.',
  'memory.recall.edges.follows': 'A `follows` edge (turns one after another).',
  'memory.recall.edges.shares': 'A `shares` edge (rare words in common).',
  gemini: 'Gemini, used only when `GEMINI_API_KEY` is set (an optional package).',
  'gemini.model': 'The model for query expansion (HyDE), structured capture and dream checks.',
  'gemini.embedding_model': 'The embedding model.',
  'gemini.base_url': 'Another endpoint for the Gemini API.',
  state: 'The session state every session starts with.',
  'state.max_chars': 'Its size bound; a cut section says what was left out (ATTENTION is never cut).',
  anneal: 'The self-annealing loop.',
  'anneal.recurring_similarity': 'A failure at least this close to an earlier one of the agent is `recurring`.',
  hooks: "The supervisor's PreToolUse hook (the guardrail).",
  'hooks.enabled': 'Serve the guardrail hook to every session.',
  'hooks.extra_dirs': 'Folders besides the vault a session may write (the wall makes them writable too).',
  'hooks.timeout': { kind: 'duration', text: 'The hook timeout the CLI is given.' },
  limits: "What one session may use up; each bound ends or refuses that session's excess, never the host.",
  'limits.tmp': { kind: 'size', text: 'Its private /tmp and /dev/shm, each.' },
  'limits.commit_file': { kind: 'size', text: 'A commit after a session: no file above this...' },
  'limits.commit_total': { kind: 'size', text: '...and no more than this in all (else nothing is committed).' },
  'limits.memory_writes': 'Memory tool writes per session.',
  'limits.endpoint_requests': 'Connections each endpoint (hooks, memory, API) holds open at once.',
  'limits.egress_connections': 'Tunnels the egress proxy holds open at once.',
  'limits.pids': { kind: 'pids', text: 'Processes and threads at once (a cgroup, else rlimits: see `doctor`); beside other sessions at most 80% of kernel.threads-max over sessions.max_concurrent.' },
  'limits.memory': { kind: 'memory_bound', text: 'Its memory, swap included; past it the kernel ends a process and the session ends. Beside other sessions at most 80% of the host\'s memory over sessions.max_concurrent.' },
  'limits.disk_free': { kind: 'size', text: "No session starts with less free on the vault's, `state_dir`'s or `log_dir`'s disk (or under 1024 free inodes); 0: off." },
};

export type ReferenceRow = { key: string; type: string; default: string; description: string };

const textOf = (d: KeyDoc) => (typeof d === 'string' ? d : d.text);

// The schema's input side as JSON Schema, with each key's kind and description filled in; the
// problems name keys without a description and descriptions of keys the schema does not have.
export function configJsonSchema(schema: z.ZodType = ConfigSchema, docs: Record<string, KeyDoc> = KEY_DOCS): { schema: Json; problems: string[] } {
  const json = z.toJSONSchema(schema, {
    // The YAML language server (VS Code's YAML extension) reads JSON Schema draft 7 and below.
    target: 'draft-07',
    io: 'input',
    unrepresentable: 'any',
    reused: 'inline',
    // A default over a transform is lost on the input side: put it back from the zod default.
    override: ({ zodSchema, jsonSchema }) => {
      const def = (zodSchema as { _zod: { def: { type: string; defaultValue?: unknown } } })._zod.def;
      if ((def.type === 'default' || def.type === 'prefault') && jsonSchema.default === undefined) jsonSchema.default = structuredClone(def.defaultValue) as never;
    },
  }) as Json;
  const seen = new Set<string>();
  const problems: string[] = [];
  walk(json, '', (key, node) => {
    seen.add(key);
    const doc = docs[key];
    if (!doc) return void problems.push(`${key}: no description (add it to KEY_DOCS in config/reference.ts)`);
    if (typeof doc !== 'string') {
      const { default: d } = node;
      for (const k of Object.keys(node)) delete node[k];
      Object.assign(node, KINDS[doc.kind].schema, d === undefined ? {} : { default: d });
    }
    node.description = textOf(doc);
  });
  for (const key of Object.keys(docs)) if (!seen.has(key)) problems.push(`${key}: described in KEY_DOCS, but the schema has no such key`);
  const { $schema, ...rest } = json;
  const out: Json = {
    $schema,
    title: 'nightshift.yaml',
    description: "The nightshift config file. Every field is optional; relative paths resolve against the file's folder. Generated from config/schema.ts by `npm run docs`.",
    ...rest,
  };
  return { schema: out, problems };
}

// Visits every key with its node, parents before children: object properties, `[]` for the items
// of an array of objects, `<model>` for the values of a record.
function walk(node: Json, prefix: string, visit: (key: string, node: Json) => void): void {
  const props = node.properties as Record<string, Json> | undefined;
  if (props) {
    for (const [k, child] of Object.entries(props)) {
      const key = prefix ? `${prefix}.${k}` : k;
      visit(key, child);
      walk(child, key, visit);
    }
    return;
  }
  const items = node.items as Json | undefined;
  if (node.type === 'array' && items?.properties) return walk(items, `${prefix}[]`, visit);
  const values = node.additionalProperties;
  if (values && typeof values === 'object' && (values as Json).properties) walk(values as Json, `${prefix}.<model>`, visit);
}

// The rows of the reference table, in the schema's order.
export function referenceRows(json: Json, docs: Record<string, KeyDoc> = KEY_DOCS): ReferenceRow[] {
  const rows: ReferenceRow[] = [];
  walk(json, '', (key, node) => {
    const doc = docs[key];
    rows.push({
      key,
      type: doc && typeof doc !== 'string' ? KINDS[doc.kind].type : typeName(node),
      default: node.type === 'object' && !key.endsWith('.prices') ? '' : defaultText(node.default),
      description: doc ? textOf(doc) : '',
    });
  });
  return rows;
}

function typeName(n: Json): string {
  if (Array.isArray(n.enum)) return n.enum.map((v) => `\`${v}\``).join(' \\| ');
  if (n.const !== undefined) return `\`${n.const}\``;
  if (Array.isArray(n.anyOf)) return (n.anyOf as Json[]).map(typeName).join(' or ');
  if (n.type === 'array') return n.items && (n.items as Json).properties ? 'list of rules' : `list of ${plural(typeName((n.items as Json) ?? {}))}`;
  if (n.type === 'object') return n.additionalProperties && typeof n.additionalProperties === 'object' ? 'map of model name to prices' : 'section';
  if (n.type === 'string' && n.format === 'uri') return 'URL';
  if (n.type === 'number' && n.minimum === 0 && n.maximum === 1) return 'number, 0 to 1';
  if (n.type === 'integer') return 'whole number';
  return typeof n.type === 'string' ? n.type : 'any';
}

const plural = (t: string) => (t === 'string' ? 'strings' : t === 'whole number' ? 'whole numbers' : t);

function defaultText(v: unknown): string {
  if (v === undefined) return '';
  if (Array.isArray(v)) return `\`[${v.join(', ')}]\``;
  if (v && typeof v === 'object') return `\`${JSON.stringify(v)}\``;
  return `\`${String(v)}\``;
}

const cell = (s: string) => s.replace(/\|/g, (m, i, all: string) => (all[i - 1] === '\\' ? m : '\\|')).replace(/\n/g, ' ');

// The reference as Markdown: one table per top-level section, so each has its own anchor.
export function referenceMarkdown(rows: ReferenceRow[]): string {
  const head = '| key | type | default | description |\n|---|---|---|---|\n';
  const line = (r: ReferenceRow) => `| \`${r.key}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description)} |\n`;
  const top = rows.filter((r) => !r.key.includes('.') && !r.key.includes('[') && r.type !== 'section' && r.key !== 'dispatch');
  const sections = rows.filter((r) => (r.type === 'section' && !r.key.includes('.')) || r.key === 'dispatch');
  let out = `### Top level\n\n${head}${top.map(line).join('')}`;
  for (const s of sections) {
    const inner = rows.filter((r) => r.key.startsWith(`${s.key}.`) || r.key.startsWith(`${s.key}[]`));
    out += `\n### ${s.key}\n\n${s.description}\n\n${head}${inner.map(line).join('')}`;
  }
  return out;
}
