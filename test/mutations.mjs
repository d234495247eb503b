// The guarantees `npm run mutate` (test/mutate.mjs) switches off, one at a time, and the tests that
// must then fail. Each: a name, the guarantee in words, the file, one exact `find` (it must occur
// once: a list gone stale fails before anything runs), its `replace`, and `tests` (parts of
// compiled test paths, as `node test/run.mjs` takes them). `build: false` for what runs as written
// (a shell script); everything else is rebuilt (tsc and the bundle) before its tests run.
export const MUTATIONS = [
  // Issue 53's survivors.
  {
    name: 'locked-tick-no-fire',
    guarantee: 'a tick turned away by the run lock leaves a fire row, settled locked',
    file: 'daemon/tick/tick.ts',
    find: "const fire = FireRecord.begin(config, { kind: 'tick', trigger, slot: deps.slot ?? null }, deps);",
    replace: "const fire = (await import('../../core/lock.js')).lockOwner(`${config.state_dir}/run`) ? (Reflect.construct(FireRecord, [null, null, null, 'tick', deps]) as FireRecord) : FireRecord.begin(config, { kind: 'tick', trigger, slot: deps.slot ?? null }, deps);",
    tests: ['e2e/fires', 'e2e/tick.test'],
  },
  {
    name: 'memory-last-written-wins',
    guarantee: 'the later-valid memory is current, whichever was written last',
    file: 'memory/store/updates.ts',
    find: "const [older, newer] = rel.kind === 'current' ? [o, me] : [me, o];",
    replace: 'const [older, newer] = [o, me];',
    tests: ['memory/store/updates'],
  },
  {
    name: 'tools-flag-omitted-when-empty',
    guarantee: 'an agent whose allow-list names no built-in tool is offered none (--tools "")',
    file: 'sessions/run/command.ts',
    find: "agent.tools === 'default' ? []",
    replace: "agent.tools === 'default' || agent.tools.length === 0 ? []",
    tests: ['e2e/tools'],
  },
  {
    name: 'ping-success-on-78',
    guarantee: 'the dead-man ping sends /fail for a tick that exits non-zero without a session (78)',
    file: 'daemon/tick/tick.ts',
    find: 'const failed = r.exit_code !== 0;',
    replace: 'const failed = r.session !== null && r.exit_code !== 0;',
    tests: ['report/ping'],
  },
  {
    name: 'ping-success-on-throw',
    guarantee: 'the dead-man ping sends /fail for a tick that throws (a damaged ledger, 70)',
    file: 'daemon/tick/tick.ts',
    find: "ping(url, 'fail', deps.redact(`tick failed",
    replace: "ping(url, 'success', deps.redact(`tick failed",
    tests: ['report/ping'],
  },
  {
    name: 'alarm-script-pings-success',
    guarantee: 'the alarm script pings the monitor\'s /fail when nightshift cannot load',
    file: 'deploy/systemd/nightshift-alert.sh',
    find: 'post "${ping%/}/fail"',
    replace: 'post "${ping%/}"',
    tests: ['deploy/alert-script'],
    build: false,
  },
  {
    name: 'upward-import-in-backticks',
    guarantee: 'no import points up a floor or closes a cycle, in backticks too',
    file: 'core/words.ts',
    find: '// Counts as people write them: `1 turn`, `2 turns`.\n',
    replace: '// Counts as people write them: `1 turn`, `2 turns`.\nexport const upward = async () => (await import(`../daemon/tick/tick.js`)).tick;\n',
    tests: ['architecture/layers', 'architecture/import-cycles'],
  },
  // docs/security.md's table.
  {
    name: 'api-proxy-any-v1-path',
    guarantee: 'the API proxy forwards only the two inference paths (batches, files, api_keys refused)',
    file: 'sessions/wall/api-proxy.ts',
    find: "if (!FORWARDED_PATHS.includes(raw)) return 'not an inference path';",
    replace: "if (!raw.startsWith('/v1/')) return 'not an inference path';",
    tests: ['sessions/wall/api-proxy.test'],
  },
  {
    name: 'terminal-8bit-controls',
    guarantee: 'a result or transcript with \\x9b (8-bit CSI) and the other C1 controls is escaped wherever shown',
    file: 'logs/terminal-text.ts',
    find: String.raw`const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f`,
    replace: String.raw`const UNSAFE_LINE = /[\u0000-\u001f\u007f`,
    tests: ['logs/terminal-text'],
  },
  {
    name: 'egress-loopback-allowed',
    guarantee: 'the egress proxy never connects to loopback (a listed name that resolves to 127.0.0.1)',
    file: 'config/egress-policy.ts',
    find: "['127.0.0.0', 8, 'loopback (127/8)'],",
    replace: "['127.0.0.0', 32, 'loopback (127/8)'],",
    tests: ['config/egress-policy', 'sessions/wall/egress-proxy'],
  },
  {
    name: 'allow-list-offers-site-set',
    guarantee: 'an agent is offered only the built-in tools its allow-list names ([Read, Write]: no Bash)',
    file: 'config/agent-text.ts',
    find: 'if (!allowed) return own ?? site;',
    replace: 'if (!allowed || allowed.length > 0) return own ?? site;',
    tests: ['config/agents', 'e2e/tools'],
  },
  {
    name: 'commit-file-limit-off',
    guarantee: 'a file over limits.commit_file is kept out of the commit and named',
    file: 'vault/git-sync.ts',
    find: 'files.filter((f) => f.size > max.file).map(',
    replace: 'files.filter((f) => f.size > max.file * 1e6).map(',
    tests: ['vault/commit-limits'],
  },
  {
    name: 'project-settings-read',
    guarantee: "the vault's .claude/settings.json, .mcp.json and CLAUDE.md never configure the CLI",
    file: 'sessions/run/command.ts',
    find: "...(config.claude.project_settings ? [] : ['--setting-sources', 'user', '--strict-mcp-config']),",
    replace: '...([] as string[]),',
    tests: ['e2e/project-settings'],
  },
];
