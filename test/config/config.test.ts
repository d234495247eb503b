import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { configPath, loadConfig } from '../../config/config.js';
import { ConfigError } from '../../core/errors.js';
import { checkCalendar } from '../../daemon/schedule/calendar.js';
import { cronSlots, mergeSlots, timeSlots, unreachable } from '../../daemon/schedule/fire-slots.js';
import { ROOT, tempDir } from '../helpers.js';

function load(t: any, yaml: string) {
  const dir = tempDir(t);
  const file = path.join(dir, 'nightshift.yaml');
  fs.writeFileSync(file, yaml);
  return { file, load: () => loadConfig(file) };
}

// Each bad config, and what its message must say (field and expectation).
const BAD: Array<[string, string, RegExp]> = [
  ['unknown top-level key', 'vaultt: ./v\n', /^  - vaultt: not a setting here\. Did you mean `vault`\? \(\S+nightshift\.yaml:1\)$/m],
  ['unknown claude key', 'claude:\n  modle: opus\n', /claude\.modle: not a setting here\. Did you mean `model`\?/],
  ['a misspelt max_turns', 'claude:\n  max_turn: 3\n', /claude\.max_turn: not a setting here\. Did you mean `max_turns`\?/],
  ['a misspelt budget', 'budgett:\n  max_usd_per_day: 3\n', /budgett: not a setting here\. Did you mean `budget`\?/],
  ['a key like no setting', 'claude:\n  zzzzzz: 1\n', /claude\.zzzzzz: not a setting here\. Known: command, /],
  ['timeout not a duration', 'claude:\n  timeout: soon\n', /claude\.timeout: Expected a duration like `90s`, `10m` or `1h`, got `soon`/],
  ['idle_timeout negative', 'claude:\n  idle_timeout: -5\n', /claude\.idle_timeout: Expected a duration/],
  ['timeout below a second', 'claude:\n  timeout: 10ms\n', /claude\.timeout: Expected a duration/],
  ['timeout beyond what a timer holds', 'claude:\n  timeout: 30d\n', /claude\.timeout: Expected a duration of at most 24d \(what a timer can hold\), got `30d`/],
  ['git timeout beyond what a timer holds', 'git:\n  lock_timeout: 25d\n', /git\.lock_timeout: Expected a duration of at most 24d/],
  ['max_turns zero', 'claude:\n  max_turns: 0\n', /claude\.max_turns: Expected a number above 0/],
  ['max_turns fractional', 'claude:\n  max_turns: 2.5\n', /claude\.max_turns: Expected a whole number/],
  ['max_turns a string', 'claude:\n  max_turns: many\n', /claude\.max_turns: Expected number, got `many` \(\S+nightshift\.yaml:2\)$/m],
  ['max_turns a list', 'claude:\n  max_turns: [3]\n', /claude\.max_turns: Expected number, got `\[3\]` \(object\)/],
  ['permission_mode unknown', 'claude:\n  permission_mode: yolo\n', /claude\.permission_mode: Expected one of acceptEdits/],
  ['permission_mode empty list', 'claude:\n  permission_mode: []\n', /claude\.permission_mode: Expected at least one allowed tool/],
  ['extra_args not a list', 'claude:\n  extra_args: --debug\n', /claude\.extra_args: .*expected array/i],
  ['command empty', 'claude:\n  command: ""\n', /claude\.command: Expected a non-empty string/],
  ['timezone unknown', 'budget:\n  timezone: Mars/Olympus\n', /budget\.timezone: Expected an IANA time zone/],
  ['max_usd_per_day negative', 'budget:\n  max_usd_per_day: -1\n', /budget\.max_usd_per_day: Expected an amount in USD above 0/],
  ['max_sessions_per_day a string', 'budget:\n  max_sessions_per_day: twelve\n', /budget\.max_sessions_per_day: .*expected number/i],
  ['max_window_utilization above 1', 'budget:\n  max_window_utilization: 80\n', /budget\.max_window_utilization: Expected a share of at most 1/],
  ['min_session_usd zero', 'budget:\n  min_session_usd: 0\n', /budget\.min_session_usd: Expected an amount in USD above 0/],
  ['a price without output', 'budget:\n  prices:\n    my-gateway: { input: 3 }\n', /budget\.prices\.my-gateway\.output: /],
  ['a negative price', 'budget:\n  prices:\n    opus: { input: -1, output: 25 }\n', /budget\.prices\.opus\.input: Expected USD per million tokens, 0 or more/],
  ['an unknown price field', 'budget:\n  prices:\n    opus: { input: 5, output: 25, cache: 1 }\n', /budget\.prices\.opus\.cache: not a setting here\. Did you mean `cache_\w+`\?/],
  ['session ceiling above the day', 'budget:\n  max_usd_per_day: 2\n  max_usd_per_session: 5\n', /budget\.max_usd_per_session: Expected at most budget\.max_usd_per_day \(2\), got 5/],
  ['idle above the wall clock', 'claude:\n  timeout: 1m\n  idle_timeout: 5m\n', /claude\.idle_timeout: Expected at most claude\.timeout/],
  ['the memory store in the vault', 'vault: ./v\nmemory:\n  db: ./v/memory.db\n', /memory\.db: Expected a folder sessions cannot write \(the default is state_dir\), got .*v\/memory\.db/],
  ['the memory store in an extra dir', 'hooks:\n  extra_dirs: [./notes]\nmemory:\n  db: notes/m.db\n', /memory\.db: Expected a folder sessions cannot write/],
  ['max_repeats above window', 'loop:\n  max_repeats: 30\n  window: 20\n', /loop\.max_repeats: Expected at most loop\.window \(20\), got 30/],
  ['max_repeats of one', 'loop:\n  max_repeats: 1\n', /loop\.max_repeats: Expected at least 2/],
  ['not YAML', 'claude: [unclosed\n', /YAML: .* at line 2, column 1:\n {4}claude: \[unclosed\n {4}\^$/m],
  ['a list at the top', '- a\n- b\n', /\(top level\): Expected a mapping of settings/],
  ['duplicate key', 'vault: a\nvault: b\n', /YAML: .*[Dd]uplicate|Map keys must be unique/],
  ['a dispatch hour of 25', 'dispatch:\n  - agent: a\n    hours: [25]\n', /dispatch\[0\]\.hours: Expected hours as numbers 0-23.*got `25`/],
  ['a dispatch rule naming no agent', 'dispatch:\n  - agent: ghost\n', /dispatch\[0\]\.agent: Expected an agent in .*got `ghost`/],
  ['a dispatch day that is no day', 'dispatch:\n  - agent: a\n    days: [mon, funday]\n', /dispatch\[0\]\.days: Expected days as names \(sun, mon, tue, wed, thu, fri, sat.*got `funday`/],
  ['a daemon schedule that is not cron', 'daemon:\n  schedule: "every day"\n', /daemon\.schedule\[0\]: Expected a cron expression/],
  ['git.enabled not a boolean', 'git:\n  enabled: maybe\n', /git\.enabled: /],
  ['claude is a string', 'claude: fast\n', /claude: .*expected object/i],
  ['forget_similarity of 0 (would refuse everything)', 'memory:\n  forget_similarity: 0\n', /memory\.forget_similarity: Expected above 0/],
  ['forget_similarity above 1', 'memory:\n  forget_similarity: 1.2\n', /memory\.forget_similarity: Expected a number from 0 to 1/],
];

describe('config', () => {
  for (const [name, yaml, expected] of BAD) {
    test(`rejects ${name} with a message naming the file and field`, (t) => {
      const c = load(t, yaml);
      assert.throws(c.load, (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.exitCode, 78);
        assert.ok(err.message.includes(c.file), 'names the file');
        assert.match(err.message, expected);
        return true;
      });
    });
  }

  test('a missing file says where it looked and how to point elsewhere', () => {
    assert.throws(() => loadConfig('/nonexistent/nightshift.yaml'), /nonexistent\/nightshift\.yaml[\s\S]*file not found \(pass --config PATH or set NIGHTSHIFT_CONFIG\)/);
  });

  test('an empty file is all defaults, paths resolved against the file\'s folder', (t) => {
    const c = load(t, '');
    const config = c.load();
    const dir = path.dirname(c.file);
    assert.equal(config.vault, path.join(dir, 'vault'));
    assert.equal(config.state_dir, path.join(dir, 'state'));
    assert.equal(config.claude.timeout, 30 * 60_000);
    assert.equal(config.claude.idle_timeout, 10 * 60_000);
    assert.equal(config.budget.max_sessions_per_day, 12);
    assert.equal(config.claude.command, 'claude');
  });

  test('durations and a relative command path are resolved', (t) => {
    const c = load(t, 'claude:\n  timeout: 90s\n  idle_timeout: 1m\n  command: ./bin/claude\n  permission_mode: [Read, "Bash(git *)"]\nloop:\n  window: 10\n');
    const config = c.load();
    assert.equal(config.claude.timeout, 90_000);
    assert.equal(config.claude.idle_timeout, 60_000);
    assert.equal(config.claude.command, path.join(path.dirname(c.file), 'bin/claude'));
    assert.deepEqual(config.claude.permission_mode, ['Read', 'Bash(git *)']);
  });

  test('the config shown in docs/configuration.md loads as it stands', (t) => {
    const page = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const block = /```yaml\n([\s\S]*?)```/.exec(page)![1];
    const c = load(t, block);
    fs.cpSync(path.join(ROOT, 'prompts'), path.join(path.dirname(c.file), 'prompts'), { recursive: true });
    const config = c.load();
    assert.equal(config.dispatch.length, 2);
    assert.deepEqual(config.dispatch[1].hours, [14, 15, 16, 17, 18, 19, 20, 21]);
    assert.deepEqual(config.daemon.schedule, ['0 * * * *']);
    // Every rule of the sample can fire, under its daemon.schedule and under the timer's default.
    assert.deepEqual(unreachable(config.dispatch, mergeSlots(config.daemon.schedule.map((e) => cronSlots(e)!))), []);
    const hourly = checkCalendar('hourly', process.env.PATH, 200);
    if (hourly.ok) assert.deepEqual(unreachable(config.dispatch, timeSlots(hourly.times, config.budget.timezone)), []);
    // The sample's old schedule, every 6 hours, never fired its 10:00 gardener: caught here.
    assert.deepEqual(unreachable(config.dispatch, cronSlots('0 */6 * * *')!), [0]);
  });

  test('the path comes from --config, else $NIGHTSHIFT_CONFIG, else ./nightshift.yaml', () => {
    assert.equal(configPath('x.yaml', { NIGHTSHIFT_CONFIG: '/e.yaml' }, '/cwd'), '/cwd/x.yaml');
    assert.equal(configPath(undefined, { NIGHTSHIFT_CONFIG: '/e.yaml' }, '/cwd'), '/e.yaml');
    assert.equal(configPath(undefined, {}, '/cwd'), '/cwd/nightshift.yaml');
  });
});

describe('NIGHTSHIFT_LOG_LEVEL', () => {
  test('a valid level is used, a bad one is ignored with a warning that names the variable', async () => {
    const { logLevel } = await import('../../cli/log-level.js');
    assert.deepEqual(logLevel('debug'), { level: 'debug', warning: null });
    assert.deepEqual(logLevel(undefined), { level: 'info', warning: null });
    const bad = logLevel('loud');
    assert.equal(bad.level, 'info');
    assert.match(bad.warning ?? '', /Expected NIGHTSHIFT_LOG_LEVEL to be one of .*got `loud`/);
  });
});
