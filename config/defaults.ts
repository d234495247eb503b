// Defaults for every optional config field, in one place so `--help` and README can quote them.
export const DEFAULTS = {
  vault: './vault',
  sandbox: 'bwrap',
  // Hosts a session may reach through the egress proxy: none, open, or a list (config/egress-policy.ts).
  network: 'none' as 'none' | 'open' | string[],
  session_user: 'nightshift-session',
  state_dir: './state',
  log_dir: './logs',
  agents_dir: './prompts',
  claude: {
    command: 'claude',
    model: 'sonnet',
    max_turns: 40,
    timeout: '30m',
    idle_timeout: '10m',
    kill_grace: '10s',
    permission_mode: 'bypassPermissions',
    extra_args: [] as string[],
    api_base: 'https://api.anthropic.com',
    // The CLI's built-in tools an unattended session gets (--tools): what it can use, no more. The
    // rest (worktrees, cron jobs, wake-ups, workflows, web search) cost ~60 kB on every request and
    // cannot serve a session that ends on its own.
    tools: ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep'] as string[] | 'default',
  },
  budget: {
    timezone: 'UTC',
    max_sessions_per_day: 12,
    max_usd_per_day: 20,
    max_usd_per_session: 5,
    min_session_usd: 0.1,
    max_window_utilization: 0.8,
  },
  git: { remote: 'origin', lock_timeout: '120s', timeout: '120s', push_retries: 3, author_name: 'nightshift', author_email: 'nightshift@localhost' },
  // Hourly, like the timer's default OnCalendar: every hour a rule names can fire.
  daemon: { schedule: '0 * * * *', shutdown_grace: '60s' },
  loop: { max_repeats: 5, window: 20, cycle_repeats: 3 },
  state: { max_chars: 12000 },
  // A failure (or an anneal pass) this close to an earlier one of the agent (Dice over words, the
  // store's similarity) is the same failure again: the earlier fix treated a symptom.
  anneal: { recurring_similarity: 0.5 },
  hooks: { timeout: '10s' },
  limits: { tmp: '512M', commit_file: '50M', commit_total: '200M', memory_writes: 300, endpoint_requests: 8, egress_connections: 32, pids: 512, memory: '2G', disk_free: '64M' },
  discord: { api_base: 'https://discord.com/api', timeout: '10s' },
  webhook: { format: 'json', timeout: '10s' },
  monitor: { ping_timeout: '5s' },
  // OpenTelemetry traces (logs/telemetry.ts): off until telemetry.otlp_endpoint is set.
  telemetry: { max_queue_size: 2048, export_timeout: '5s', flush_timeout: '1s' },
  // The fleet (docs/fleet.md): a reservation expires at the session's timeout + kill_grace + grace.
  // A claim's lease: a dead host's claim is let go this long after its last heartbeat.
  fleet: { grace: '10m', connect_timeout: '5s', lease: '2m' },
  alerts: { max_silence: '26h', max_consecutive_failures: 3 },
  // Holds (budget/holds.ts): after N failures in a row an agent waits base, 2x base, ... up to max;
  // a rate limit without a reset time waits rate_limit, doubling, up to max.
  backoff: { after_failures: 3, base: '1h', max: '24h', rate_limit: '15m' },
  memory: {
    db: 'memory.db', // inside state_dir
    // Whose memories (memory/store/scope.ts): agent (a session reads its agent's and the shared
    // ones, writes its agent's) or shared (every session reads and writes all, as before).
    scope: 'agent',
    embeddings: 'auto', // the offline vector arm: auto (= none, as measured), none, use
    dream_after: 200, // observations since the last dream
    dream_every: '24h', // since the last dream (with anything new observed)
    // wander's jump rate to an overdue memory; what dream fades (R below and salience below).
    learning: { wander_jump: 0.4, fade_retrievability: 0.5, fade_salience: 0.3 },
    gate: { merge: 0.9, link: 0.5 },
    // A text this close (sequence Dice over folded words) to a forgotten claim is refused too
    // (docs/memory.md: the variant tables and their false-refusal rate).
    forget_similarity: 0.8,
    // Two memories the same but for one value are an update (memory/store/updates.ts); false: as before.
    updates: true,
    recall: {
      rrf_k: 1,
      lexical: 1,
      common: 0.5,
      vector: 0.5,
      seeds: 20,
      hops: 2,
      decay: 0.5,
      activation: 1,
      recency: 0.02,
      half_life_days: 30,
      salience: 0.02,
      edges: { supports: 0.8, contradicts: 0.3, abstracts: 0.8, relates_to: 0.6, supersedes: 0.2, follows: 1, shares: 0.25 },
      // A memory a newer one marks possibly outdated (a changed value the writer could not end) keeps half its score.
      outdated: 0.5,
      // A query naming a known speaker: another speaker's memory not about them keeps half its score.
      speaker: 0.5,
      // A memory that mostly asks (most of its sentences questions) keeps half its score: it tells less.
      asking: 0.5,
      // A query naming a date or a month of a year: a memory begun outside it keeps half its score.
      period: 0.5,
      // Rare-word links across sessions (memory/store/links.ts), words in at most 1% of observations,
      // at most 5 a memory (0: off).
      link_cap: 5,
      link_rare: 0.01,
    },
  },
} as const;

export const CONFIG_ENV = 'NIGHTSHIFT_CONFIG';
export const CONFIG_DEFAULT_FILE = 'nightshift.yaml';
