// The config's one zod schema and the types it gives: every field, its default and its message.
// config.ts reads the file and validates with it; rules.ts checks what spans fields.
import { createRequire } from 'node:module';
import { z } from 'zod';
import { isUtc } from './day.js';
import { DEFAULTS } from './defaults.js';
import { parseDuration } from './duration.js';
import { formatSize, parseSize } from './size.js';
import { parseDays, parseHours } from './schedule-spec.js';
import { networkEntryProblem, normalizeHost } from './egress-policy.js';
import { show } from './show.js';

// A config is read once per process: zod's compiled parsers would cost more to build (~10 ms)
// than they save on one parse.
z.config({ jitless: true });

// node-cron loads only for a config that names its own cron schedule (~15 ms at every start
// otherwise): the default one is known good.
const validateCron = (expr: string): boolean =>
  expr === DEFAULTS.daemon.schedule || (createRequire(import.meta.url)('node-cron') as typeof import('node-cron')).validate(expr);

const PERMISSION_MODES = ['acceptEdits', 'auto', 'bypassPermissions', 'default', 'dontAsk', 'plan'] as const;

export { show };

export const MAX_TIMER_MS = 2 ** 31 - 1;

// A size field: `512M`, `50MB`, `2G`; becomes bytes.
export const size = (min = 0) =>
  z.unknown().transform((v, ctx) => {
    const bytes = parseSize(v);
    if (bytes === null || bytes < min) {
      ctx.addIssue({ code: 'custom', message: `Expected a size like \`512M\`, \`50MB\` or \`2G\`${min > 1 ? ` of at least ${formatSize(min)}` : ''}, got ${show(v)}` });
      return z.NEVER;
    }
    return bytes;
  });

// A bound that `off` turns off; `parse` gives the number, or null when the value is not one.
const boundOrOff = (expected: string, parse: (v: unknown) => number | null) =>
  z.unknown().transform((v, ctx): number | 'off' => {
    if (v === 'off') return 'off';
    const n = parse(v);
    if (n === null) {
      ctx.addIssue({ code: 'custom', message: `Expected ${expected}, or \`off\`, got ${show(v)}` });
      return z.NEVER;
    }
    return n;
  });

// A duration field: `90s`, `10m`, `1h`; becomes milliseconds.
export const duration = (min = 1) =>
  z.unknown().transform((v, ctx) => {
    const ms = parseDuration(v);
    if (ms === null || ms < min) {
      ctx.addIssue({ code: 'custom', message: `Expected a duration like \`90s\`, \`10m\` or \`1h\`, got ${show(v)}` });
      return z.NEVER;
    }
    // A Node timer holds at most 2^31-1 ms; a longer one fires at once.
    if (ms > MAX_TIMER_MS) {
      ctx.addIssue({ code: 'custom', message: `Expected a duration of at most 24d (what a timer can hold), got ${show(v)}` });
      return z.NEVER;
    }
    return ms;
  });

const nonEmpty = z.string().min(1, 'Expected a non-empty string');
// A built-in tool set: `default` (the CLI's whole set) or names like `Bash`, `Read`.
export const toolSet = z.union([z.literal('default'), z.array(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'Expected a tool name like `Bash` or `Read`'))], {
  error: 'Expected `default` or a list of tool names like [Bash, Read, Edit]',
});

// What a session may reach beyond the supervisor's endpoints (sessions/wall/egress-proxy.ts):
// `none`, `open` (any public host) or a list of host names (`*.example.com` for the names below
// one); an empty list is none. Names are kept lower case, without a trailing dot.
export const network = z
  .union([z.enum(['none', 'open']), z.array(z.string())], { error: 'Expected `none`, `open` or a list of host names' })
  .superRefine((v, ctx) => {
    if (!Array.isArray(v)) return;
    v.forEach((h, i) => {
      const problem = networkEntryProblem(h);
      if (problem) ctx.addIssue({ code: 'custom', path: [i], message: `${problem}, got ${show(h)}` });
    });
  })
  .transform((v) => (Array.isArray(v) ? (v.length ? [...new Set(v.map(normalizeHost))] : ('none' as const)) : v));
const posInt = z.number().int('Expected a whole number').positive('Expected a number above 0');
const usd = z.number().positive('Expected an amount in USD above 0');
const perMillion = z.number().nonnegative('Expected USD per million tokens, 0 or more');
const ModelPrice = z.strictObject({
  input: perMillion,
  output: perMillion,
  cache_write: perMillion.optional(),
  cache_write_1h: perMillion.optional(),
  cache_read: perMillion.optional(),
});
const timezone = z.string().refine((tz) => {
  if (isUtc(tz)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, { message: 'Expected an IANA time zone such as `UTC` or `Europe/Berlin`' });

const specField = (parse: (v: unknown) => number[] | string) =>
  z.unknown().transform((v, ctx) => {
    const r = parse(v);
    if (typeof r === 'string') {
      ctx.addIssue({ code: 'custom', message: r });
      return z.NEVER;
    }
    return r;
  });

// One dispatch rule: the first whose conditions hold and whose agent is within its limits wins.
const DispatchRule = z.strictObject({
  agent: nonEmpty,
  days: specField(parseDays).optional(),
  hours: specField(parseHours).optional(),
  min_interval: duration(1000).optional(),
  max_runs_per_day: posInt.optional(),
});

const cronList = z
  .union([nonEmpty, z.array(nonEmpty).min(1)])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .superRefine((list, ctx) => {
    list.forEach((expr, i) => {
      if (!validateCron(expr)) ctx.addIssue({ code: 'custom', path: [i], message: `Expected a cron expression like \`0 */6 * * *\`, got \`${expr}\`` });
    });
  });

// The memory store: its file, the gate's thresholds and the recall weights (see memory/rank.ts).
const fraction = z.number().min(0, 'Expected a number from 0 to 1').max(1, 'Expected a number from 0 to 1');
const nonNegative = z.number().min(0, 'Expected a number of 0 or more');
const R = DEFAULTS.memory.recall;
const MemorySchema = z
  .strictObject({
    db: nonEmpty.optional(),
    // Whose memories a session reads and writes (memory/store/scope.ts).
    scope: z.enum(['agent', 'shared'], { error: 'Expected one of `agent`, `shared`' }).default(DEFAULTS.memory.scope),
    // The offline vector arm (memory/embedders.ts); Gemini takes over whenever GEMINI_API_KEY is set.
    embeddings: z.enum(['auto', 'none', 'use'], { error: 'Expected one of `auto`, `none`, `use`' }).default(DEFAULTS.memory.embeddings),
    // Memory pressure that makes a tick with nothing due dream instead (memory/pressure.ts).
    dream_after: posInt.default(DEFAULTS.memory.dream_after),
    dream_every: duration(60_000).prefault(DEFAULTS.memory.dream_every),
    // The learning layer's knobs (memory/store.ts LearningSettings).
    learning: z
      .strictObject({
        wander_jump: fraction.default(DEFAULTS.memory.learning.wander_jump),
        fade_retrievability: fraction.default(DEFAULTS.memory.learning.fade_retrievability),
        fade_salience: fraction.default(DEFAULTS.memory.learning.fade_salience),
      })
      .prefault({}),
    gate: z
      .strictObject({ merge: fraction.default(DEFAULTS.memory.gate.merge), link: fraction.default(DEFAULTS.memory.gate.link) })
      .refine((g) => g.link <= g.merge, { message: 'Expected `link` to be at most `merge`', path: ['link'] })
      .prefault({}),
    // A near copy of a forgotten claim (memory/tombstone-key.ts) at or above this is refused.
    updates: z.boolean().default(DEFAULTS.memory.updates),
    forget_similarity: fraction.refine((x) => x > 0, { message: 'Expected above 0' }).default(DEFAULTS.memory.forget_similarity),
    recall: z
      .strictObject({
        rrf_k: nonNegative.default(R.rrf_k),
        lexical: nonNegative.default(R.lexical),
        common: fraction.default(R.common),
        vector: nonNegative.default(R.vector),
        seeds: z.number().int('Expected a whole number').min(0).default(R.seeds),
        hops: z.number().int('Expected a whole number').min(0).max(4, 'Expected at most 4').default(R.hops),
        decay: fraction.default(R.decay),
        activation: nonNegative.default(R.activation),
        recency: nonNegative.default(R.recency),
        half_life_days: nonNegative.default(R.half_life_days),
        salience: nonNegative.default(R.salience),
        speaker: fraction.default(R.speaker),
        asking: fraction.default(R.asking),
        period: fraction.default(R.period),
        outdated: fraction.default(R.outdated),
        link_cap: z.number().int('Expected a whole number').min(0).max(50, 'Expected at most 50').default(R.link_cap),
        link_rare: fraction.default(R.link_rare),
        edges: z
          .strictObject(Object.fromEntries(Object.entries(R.edges).map(([k, v]) => [k, fraction.default(v)])) as Record<keyof typeof R.edges, z.ZodDefault<typeof fraction>>)
          .prefault({}),
      })
      .prefault({}),
  })
  .prefault({});

export const ConfigSchema = z.strictObject({
  vault: nonEmpty.default(DEFAULTS.vault),
  // The wall around every session (sessions/wall/sandbox.ts); `none` only when chosen explicitly.
  sandbox: z.enum(['bwrap', 'none'], { error: 'Expected `bwrap` or `none`' }).default(DEFAULTS.sandbox),
  // The site's egress policy; an agent's own `network:` replaces it.
  network: network.default(DEFAULTS.network),
  // The user a root supervisor runs its walled sessions as (config/session-user.ts); a
  // supervisor that is not root runs them as itself. Never root, never nobody (other services share it).
  session_user: nonEmpty
    .refine((u) => !['root', 'nobody'].includes(u), { error: (i) => `Expected an unprivileged user of nightshift's own (never \`root\`, never \`nobody\`, which other services share), got ${show(i.input)}: the default is \`${DEFAULTS.session_user}\`` })
    .default(DEFAULTS.session_user),
  // A vault of its own for an agent (its name: a folder path): its sessions work there, and may
  // run beside sessions of agents in other vaults (sessions sharing a vault take turns).
  vaults: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'Expected an agent\'s name'), nonEmpty).default({}),
  // How many sessions this host runs at once (a tick starts as many due agents), one per agent.
  sessions: z.strictObject({ max_concurrent: posInt.default(1) }).prefault({}),
  state_dir: nonEmpty.default(DEFAULTS.state_dir),
  log_dir: nonEmpty.default(DEFAULTS.log_dir),
  agents_dir: nonEmpty.default(DEFAULTS.agents_dir),
  claude: z
    .strictObject({
      command: nonEmpty.default(DEFAULTS.claude.command),
      model: nonEmpty.default(DEFAULTS.claude.model),
      max_turns: posInt.default(DEFAULTS.claude.max_turns),
      timeout: duration(1000).prefault(DEFAULTS.claude.timeout),
      idle_timeout: duration(1000).prefault(DEFAULTS.claude.idle_timeout),
      kill_grace: duration(0).prefault(DEFAULTS.claude.kill_grace),
      permission_mode: z
        .union([z.enum(PERMISSION_MODES), z.array(nonEmpty).min(1, 'Expected at least one allowed tool')], {
          error: `Expected one of ${PERMISSION_MODES.join(', ')} or a list of allowed tools`,
        })
        .default(DEFAULTS.claude.permission_mode),
      extra_args: z.array(z.string()).default([]),
      // The CLI's project files in the vault (.claude/settings*.json, .mcp.json, CLAUDE.md) are
      // what a session wrote: loaded only when the operator opts in (doctor warns).
      project_settings: z.boolean().default(false),
      // The built-in tool set (--tools): a list of the CLI's tool names, or `default` for all.
      tools: toolSet.default(DEFAULTS.claude.tools),
      // Where the supervisor's API proxy sends a session's requests (ANTHROPIC_BASE_URL in the
      // supervisor's environment wins).
      api_base: z.url({ error: 'Expected a URL such as `https://api.anthropic.com`' }).default(DEFAULTS.claude.api_base),
    })
    .prefault({}),
  budget: z
    .strictObject({
      timezone: timezone.default(DEFAULTS.budget.timezone),
      max_sessions_per_day: posInt.default(DEFAULTS.budget.max_sessions_per_day),
      max_usd_per_day: usd.default(DEFAULTS.budget.max_usd_per_day),
      max_usd_per_session: usd.default(DEFAULTS.budget.max_usd_per_session),
      // The smallest reservation a session starts with (never above max_usd_per_session).
      min_session_usd: usd.default(DEFAULTS.budget.min_session_usd),
      // The meter's prices in USD per million tokens, by model id or a part of one (a gateway's
      // names included); over the built-in table (budget/pricing.ts).
      prices: z.record(z.string().min(1, 'Expected a model name'), ModelPrice).default({}),
      // The share of a subscription's 5-hour and 7-day windows unattended sessions may use.
      max_window_utilization: z.number().gt(0, 'Expected a share above 0').max(1, 'Expected a share of at most 1').default(DEFAULTS.budget.max_window_utilization),
    })
    .prefault({}),
  dispatch: z.array(DispatchRule).default([]),
  git: z
    .strictObject({
      enabled: z.boolean().default(true),
      remote: nonEmpty.default(DEFAULTS.git.remote),
      branch: nonEmpty.optional(),
      lock_file: nonEmpty.optional(),
      lock_timeout: duration(0).prefault(DEFAULTS.git.lock_timeout),
      timeout: duration(1000).prefault(DEFAULTS.git.timeout),
      push_retries: posInt.default(DEFAULTS.git.push_retries),
      author_name: nonEmpty.default(DEFAULTS.git.author_name),
      author_email: nonEmpty.default(DEFAULTS.git.author_email),
    })
    .prefault({}),
  daemon: z
    .strictObject({
      schedule: cronList.prefault(DEFAULTS.daemon.schedule),
      shutdown_grace: duration(0).prefault(DEFAULTS.daemon.shutdown_grace),
    })
    .prefault({}),
  loop: z
    .strictObject({
      max_repeats: z.number().int().min(2, 'Expected at least 2').default(DEFAULTS.loop.max_repeats),
      window: posInt.default(DEFAULTS.loop.window),
      cycle_repeats: z.number().int().min(2, 'Expected at least 2').default(DEFAULTS.loop.cycle_repeats),
    })
    .prefault({}),
  // Discord reports (report/): the webhook itself comes from DISCORD_WEBHOOK_URL, never the config.
  discord: z
    .strictObject({
      api_base: z.url({ error: 'Expected a URL such as `https://discord.com/api`' }).default(DEFAULTS.discord.api_base),
      timeout: duration(100).prefault(DEFAULTS.discord.timeout),
      username: nonEmpty.optional(),
    })
    .prefault({}),
  // The second report channel (report/webhook.ts): the URL itself comes from NIGHTSHIFT_WEBHOOK_URL
  // (the env file: it may carry a token), never the config; `ntfy` posts plain text to a topic URL.
  webhook: z
    .strictObject({
      format: z.enum(['json', 'ntfy'], { error: 'Expected one of `json`, `ntfy`' }).default(DEFAULTS.webhook.format),
      timeout: duration(100).prefault(DEFAULTS.webhook.timeout),
    })
    .prefault({}),
  // A dead-man's check outside the host (healthchecks.io's convention): each tick pings
  // `<ping_url>/start` when it begins, `<ping_url>` when it ends well, `<ping_url>/fail` (the reason
  // as the body) when it fails; the alert unit pings /fail too, even when nightshift cannot run.
  // The service notices silence itself. Held to `ping_timeout`, never blocking or failing a tick;
  // the URL is a secret, never logged (`systemd install` copies it into a 0600 file for the alarm).
  monitor: z
    .strictObject({
      ping_url: z.url({ protocol: /^https?$/, error: 'Expected an http(s) URL such as `https://hc-ping.com/<uuid>`' }).optional(),
      ping_timeout: duration(100).prefault(DEFAULTS.monitor.ping_timeout),
    })
    .prefault({}),
  // OpenTelemetry traces (logs/telemetry.ts, docs/observability.md): one trace per fire, from the
  // fire to each API request, tool call and memory operation. Off until `otlp_endpoint` is set;
  // headers (a collector's token) come from NIGHTSHIFT_OTLP_HEADERS in the env file, never here.
  telemetry: z
    .strictObject({
      otlp_endpoint: z.url({ protocol: /^https?$/, error: 'Expected an OTLP/HTTP base URL such as `http://127.0.0.1:4318`' }).optional(),
      // Agents whose prompt, result, tool input and memory text may go into their spans (secrets never).
      capture_content: z.array(nonEmpty).default([]),
      // Spans held for export at most; past it they are dropped and counted in the fire's row.
      max_queue_size: posInt.default(DEFAULTS.telemetry.max_queue_size),
      // One export request's bound, and the most a tick waits at its end for what is left.
      export_timeout: duration(100).prefault(DEFAULTS.telemetry.export_timeout),
      flush_timeout: duration(0).prefault(DEFAULTS.telemetry.flush_timeout),
    })
    .prefault({}),
  // Several hosts under one budget (docs/fleet.md): only with NIGHTSHIFT_DATABASE_URL in the env
  // file (never here). This host's name in the fleet (default: the machine's hostname), and what a
  // session's shared reservation outlives its own wall-clock limit by before the day gets it back;
  // the lease a fire's claim holds, renewed by this host's heartbeat (every quarter of it) while it
  // works, so a dead host's claim is let go this long after its last beat.
  fleet: z
    .strictObject({
      host: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'Expected a host name like `vps-1` (letters, digits, `.`, `_`, `-`)').optional(),
      grace: duration(1000).prefault(DEFAULTS.fleet.grace),
      connect_timeout: duration(100).prefault(DEFAULTS.fleet.connect_timeout),
      lease: duration(1000).prefault(DEFAULTS.fleet.lease),
      max_concurrent: posInt.optional(),
    })
    .prefault({}),
  // What `nightshift doctor` treats as a failure worth an alert.
  alerts: z
    .strictObject({
      max_silence: duration(60_000).prefault(DEFAULTS.alerts.max_silence),
      max_consecutive_failures: posInt.default(DEFAULTS.alerts.max_consecutive_failures),
    })
    .prefault({}),
  // Holds and backoff: a failing or rate-limited agent waits instead of failing on every tick.
  backoff: z
    .strictObject({
      after_failures: posInt.default(DEFAULTS.backoff.after_failures),
      base: duration(1000).prefault(DEFAULTS.backoff.base),
      max: duration(1000).prefault(DEFAULTS.backoff.max),
      rate_limit: duration(1000).prefault(DEFAULTS.backoff.rate_limit),
    })
    .refine((b) => b.base <= b.max, { message: 'Expected `base` to be at most `max`', path: ['base'] })
    .prefault({}),
  memory: MemorySchema,
  gemini: z
    .strictObject({
      model: nonEmpty.optional(),
      embedding_model: nonEmpty.optional(),
      base_url: z.url({ error: 'Expected a URL such as `https://generativelanguage.googleapis.com`' }).optional(),
    })
    .prefault({}),
  // The session state every session starts with (sessions/state/state.ts).
  state: z
    .strictObject({ max_chars: z.number().int('Expected a whole number').min(500, 'Expected at least 500').default(DEFAULTS.state.max_chars) })
    .prefault({}),
  // The self-annealing loop (sessions/state/anneal.ts): when a failure counts as the same one again.
  anneal: z
    .strictObject({ recurring_similarity: fraction.refine((x) => x > 0, { message: 'Expected above 0' }).default(DEFAULTS.anneal.recurring_similarity) })
    .prefault({}),
  // The supervisor's PreToolUse hook (sessions/hooks/hook-server.ts): writes outside the vault and
  // extra_dirs are blocked.
  hooks: z
    .strictObject({
      enabled: z.boolean().default(true),
      extra_dirs: z.array(nonEmpty).default([]),
      timeout: duration(1000).prefault(DEFAULTS.hooks.timeout),
    })
    .prefault({}),
  // What one session may use up; each bound ends or refuses that session's excess, never the host.
  limits: z
    .strictObject({
      // The wall's private /tmp and /dev/shm, each.
      tmp: size(1024 * 1024).prefault(DEFAULTS.limits.tmp),
      // A commit after a session: no file above commit_file, no more than commit_total added.
      commit_file: size(1).prefault(DEFAULTS.limits.commit_file),
      commit_total: size(1).prefault(DEFAULTS.limits.commit_total),
      // Memories one session may write through its tools.
      memory_writes: posInt.default(DEFAULTS.limits.memory_writes),
      // Requests one endpoint (hooks, memory, API) serves at once for a session.
      endpoint_requests: posInt.default(DEFAULTS.limits.endpoint_requests),
      // Connections (HTTPS tunnels included) the egress proxy holds open at once for a session.
      egress_connections: posInt.default(DEFAULTS.limits.egress_connections),
      // Processes (threads counted) and memory (swap included) of one session: a cgroup where one
      // can be had, else rlimits (sessions/wall/bounds.ts; doctor says which). `off`: no bound.
      pids: boundOrOff('a whole number of processes such as `512`', (v) => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : null)).prefault(DEFAULTS.limits.pids),
      memory: boundOrOff('a size like `2G` of at least 16M', (v) => { const b = parseSize(v); return b !== null && b >= 16 * 1024 * 1024 ? b : null; }).prefault(DEFAULTS.limits.memory),
      // Free space below which no session starts on the disk of the vault, state_dir or log_dir.
      disk_free: size(0).prefault(DEFAULTS.limits.disk_free),
    })
    .prefault({}),
});

export type RawConfig = z.output<typeof ConfigSchema>;
// Paths absolute; `file` and `dir` say where it came from.
// `rehearsal`: set only on the config a rehearsal runs with (config/rehearsal.ts), never from the
// file; `hide` are the real site's folders, hidden from its session like its own state.
export type Config = Omit<RawConfig, 'git'> & { git: RawConfig['git'] & { lock_file: string }; file: string; dir: string; rehearsal?: { hide: string[] } };

