// The doctor's checks of what will fail before money is spent: the env file, the credential, a
// permission mode the CLI refuses, folders and databases the service user cannot use, and rules
// no tick can ever fire. Each check is a function over facts; `applyFixes` does the safe fixes.
import fs from 'node:fs';
import path from 'node:path';
import { credentialFrom } from '../../sessions/wall/api-proxy.js';
import { REHEARSAL_KEY_PREFIX, rehearsalCredential } from '../../config/rehearsal.js';
import { memoryDbPath } from '../../memory/store/db-path.js';
import type { CheckFacts } from '../../report/embed.js';
import { ruleTool, type Agent } from '../../config/agent-text.js';
import { checkCalendar } from '../schedule/calendar.js';
import type { Config } from '../../config/schema.js';
import { readableByOthers, type EnvFileResult } from '../../config/env-file.js';
import { accessAdvice, accessFacts, runAsOwner } from '../../core/file-access.js';
import { cronSlots, mergeSlots, slotHours, timeSlots, unreachable, type Slots } from '../schedule/fire-slots.js';
import { DAY_NAMES } from '../../config/schedule-spec.js';
import { runChild } from '../../core/child-process.js';
import { useraddCommand } from '../../core/passwd.js';
import { hiddenByWall, resolveCommand } from '../../sessions/wall/sandbox.js';
import { foundIn, installedUnitPath } from '../systemd.js';
import { reachProblems, sessionGroupBits, sessionUserFor, siteOwner, vaultFix } from '../../config/session-user.js';
import { counted } from '../../core/words.js';

type Check = CheckFacts;
const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail, fix: null });
const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });
const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

// `typos`: variables that look like a misspelt one nightshift reads (config/name-warnings.ts).
export function envCheck(f: EnvFileResult | null, envFile: string, typos: string[] = []): Check {
  if (!f) return ok('env', `${envFile} not read`);
  if (f.insecure) return fail('env', `${f.file}: ${f.insecure.replace(/; fix: .*/, '')}; every other command refuses it`, `chmod 600 ${f.file} (or nightshift doctor --fix)`);
  if (f.problems.length) return warn('env', `${f.file}: lines skipped: ${f.problems.join('; ')}`, `write them as KEY=VALUE in ${f.file}`);
  if (f.skipped === 'not found') return ok('env', `no env file at ${f.file} (the environment only)`);
  if (f.skipped) return warn('env', `${f.file} ${f.skipped} as this user: what it holds is not known here`, `run nightshift doctor as the user that can read it (systemd reads it as root for the units)`);
  if (typos.length) return warn('env', typos.join('; '), `rename them in ${f.file} (a variable an agent's env: passes on is never warned about)`);
  return ok('env', `${f.file}: ${counted(f.loaded.length, 'variable')} taken (the environment wins over the file)`);
}

// Pure: every session fails "Not logged in" without one.
export function credentialCheck(env: NodeJS.ProcessEnv, f: EnvFileResult | null, envFile: string): Check {
  const c = credentialFrom(env);
  // Left over from `rehearse --serve`: every session would be refused (or, were it not, write the
  // imitation's answers into the real site).
  const rehearsing = rehearsalCredential(env);
  if (rehearsing) {
    const from = f?.loaded.includes(rehearsing) ? f.file : 'the environment';
    return fail('credential', `${rehearsing} in ${from} is a rehearsal's key (${REHEARSAL_KEY_PREFIX}…)${env.ANTHROPIC_BASE_URL ? ` and ANTHROPIC_BASE_URL points at ${env.ANTHROPIC_BASE_URL}` : ''}: the site still points at a rehearsal, and every session is refused`,
      `take the ANTHROPIC_BASE_URL and ${rehearsing} lines of the rehearsal out of ${from === 'the environment' ? 'the environment' : from} and put the real key back (ANTHROPIC_API_KEY=... or CLAUDE_CODE_OAUTH_TOKEN=...); \`nightshift rehearse AGENT\` rehearses with no env file change`);
  }
  if (c) return ok('credential', `${c.kind === 'api_key' ? 'ANTHROPIC_API_KEY' : c.kind === 'oauth' ? 'CLAUDE_CODE_OAUTH_TOKEN' : 'ANTHROPIC_AUTH_TOKEN'} is set${f?.loaded.some((k) => /^(ANTHROPIC_API_KEY|CLAUDE_CODE_OAUTH_TOKEN|ANTHROPIC_AUTH_TOKEN)$/.test(k)) ? ` (from ${f.file})` : ''}`);
  const detail = 'neither ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN is set, in the environment or the env file: every session would fail "Not logged in"';
  const fix = `put ANTHROPIC_API_KEY=... (or CLAUDE_CODE_OAUTH_TOKEN=..., from \`claude setup-token\`) in ${envFile}`;
  // The file is there but not for us: the units may well have it.
  return f?.skipped && f.skipped !== 'not found' ? warn('credential', `${detail} (${f.file} ${f.skipped})`, fix) : fail('credential', detail, fix);
}

// Pure: as root the CLI refuses --permission-mode bypassPermissions (unless IS_SANDBOX=1); agents
// with their own allowed_tools run with --allowedTools instead.
export function permissionCheck(config: Config, agents: Agent[], uid: number, env: NodeJS.ProcessEnv): Check {
  const refused = agents.filter((a) => !a.allowedTools);
  // Walled, a root supervisor's CLI runs as session_user, which the CLI does not refuse.
  if (uid === 0 && config.sandbox === 'bwrap') return ok('permission', `running as root; each session's CLI runs as session_user ${config.session_user}, never root`);
  if (uid !== 0 || config.claude.permission_mode !== 'bypassPermissions' || !refused.length || env.IS_SANDBOX === '1') {
    return ok('permission', uid === 0 ? 'running as root, and no agent relies on bypassPermissions' : `claude.permission_mode ${Array.isArray(config.claude.permission_mode) ? 'is a tool list' : config.claude.permission_mode}`);
  }
  return fail('permission',
    `running as root with claude.permission_mode bypassPermissions, which the CLI refuses as root; agents without allowed_tools: ${refused.map((a) => a.name).join(', ')}`,
    `run as the service user (runuser -u nightshift -- nightshift ...), or give each agent an allowed_tools list`);
}

// Pure: each agent's offered built-in tools (what `--tools` gets; with allowed_tools, only those its
// rules name), and what cannot work, each with its own fix: an allowed tool its own `tools:` leaves
// out is never offered; WebFetch fetches through the egress proxy, which an agent without a
// `network:` does not have. WebSearch needs none: it is a server tool, run at the API.
export function toolsCheck(agents: Agent[]): Check {
  const problems: string[] = [];
  const fixes = new Set<string>();
  for (const a of agents) {
    if (a.tools === 'default') continue;
    const missing = [...new Set((a.allowedTools ?? []).map(ruleTool).filter((t): t is string => t !== null && !a.tools.includes(t as string)))];
    if (missing.length) {
      problems.push(`${a.name}: allowed_tools names ${missing.join(', ')}, not in its tools`);
      fixes.add(`${a.name}: add ${missing.join(', ')} to its \`tools:\` (or take ${missing.length === 1 ? 'it' : 'them'} out of allowed_tools)`);
    }
    if (a.tools.includes('WebFetch') && a.network === 'none') {
      problems.push(`${a.name}: WebFetch cannot reach the web: the agent names no network`);
      fixes.add(`${a.name}: give it the hosts it fetches from (\`network: [en.wikipedia.org]\` in its front matter, or the site's \`network:\`), or take WebFetch out of its tools`);
    }
  }
  const sets = agents.map((a) => `${a.name}: ${a.tools === 'default' ? 'the CLI\'s whole set' : a.tools.join(',') || 'none'}${a.allowedTools ? ' (its allowed_tools)' : ''}`).join('; ') || 'no agents';
  if (!problems.length) return ok('tools', sets);
  return warn('tools', `${problems.join('; ')}; offered: ${sets}`, [...fixes].join('; '));
}

// The folders and databases a tick writes: who owns them, who we are, and the chown.
export function accessCheck(c: Config): Check {
  const problems: string[] = [];
  const missing: string[] = [];
  const targets: Array<[string, string, boolean]> = [
    [c.state_dir, 'state_dir', true], [c.log_dir, 'log_dir', true], [c.vault, 'vault', true],
    [path.join(c.state_dir, 'ledger.db'), 'ledger', false], [memoryDbPath(c), 'memory database', false],
  ];
  for (const [p, what, folder] of targets) {
    if (folder && what !== 'vault' && !fs.existsSync(p)) missing.push(p);
    try {
      const f = accessFacts(p, what, { folder });
      if (f && !problems.some((x) => x.includes(` ${f.path},`))) problems.push(accessAdvice(f, p));
    } catch {
      // racing with a delete: the other checks say what is there
    }
  }
  if (problems.length) {
    const fix = problems.map((p) => /fix the access: (.*)$/.exec(p)?.[1]).filter(Boolean).join('; ');
    return fail('access', problems.map((p) => p.replace(/ The file is not damaged; fix the access: .*$/, '')).join(' | '), fix);
  }
  if (missing.length) return warn('access', `not made yet: ${missing.join(', ')} (a unit's ReadWritePaths= needs them before its first start)`, `nightshift doctor --fix (or mkdir -p ${missing.join(' ')})`);
  try {
    const st = fs.statSync(c.state_dir);
    const mode = st.mode;
    // A root supervisor's session user passes through to its own folder (search, by its group).
    if (mode & 0o077 & ~sessionGroupBits(st, sessionUserFor(c).user)) return warn('access', `state_dir ${c.state_dir} has mode ${octal(mode)}: other users can read the ledger and the memory database`, `chmod 700 ${c.state_dir} (or nightshift doctor --fix)`);
  } catch {
    // reported above
  }
  return ok('access', 'state_dir, log_dir, the vault, the ledger and the memory database are ours to write');
}

type Timer = { file: string; specs: string[] };

const describe = (r: Config['dispatch'][number]) => [r.days ? `days ${r.days.map((d) => DAY_NAMES[d]).join(',')}` : '', r.hours ? `hours ${r.hours.join(',')}` : ''].filter(Boolean).join(', ');

// Pure: the rules a schedule can never fire, as one line.
export function neverFires(rules: Config['dispatch'], slots: Slots, schedule: string): string[] {
  return unreachable(rules, slots).map((i) => `under ${schedule} rule [${i}] ${rules[i].agent} (${describe(rules[i])}) can never fire: ticks start only at hours ${slotHours(slots, rules[i].days).join(',') || 'none'} on its days`);
}

// Calendar specs (a timer's OnCalendar=) against the rules: those systemd refuses, and the rules
// no elapse reaches. Fewer than seven days of elapses would not show the week: then none claimed.
export function calendarReach(c: Config, label: string, specs: string[], pathEnv: string | undefined): { refused: string[]; never: string[] } {
  const refused: string[] = [];
  const elapses: Date[] = [];
  let known = true;
  for (const spec of specs) {
    const r = checkCalendar(spec, pathEnv, 2000);
    if (r.ok === false) refused.push(`OnCalendar=${spec} is refused by systemd: ${r.error}`);
    if (r.ok !== true) {
      known = false;
      continue;
    }
    elapses.push(...r.times);
  }
  const span = elapses.length ? Math.max(...elapses.map(Number)) - Math.min(...elapses.map(Number)) : 0;
  const never = known && span >= 6 * 86_400_000 ? neverFires(c.dispatch, timeSlots(elapses, c.budget.timezone), label) : [];
  return { refused, never };
}

// A dispatch rule no tick can reach, under daemon.schedule and under an installed timer.
export function scheduleCheck(c: Config, timer: Timer | null, pathEnv: string | undefined): Check {
  if (!c.dispatch.length) return ok('schedule', 'no dispatch rules: ticks skip (run agents with nightshift run)');
  const out: string[] = [];
  const fixes: string[] = [];
  const cron = c.daemon.schedule.map(cronSlots);
  if (cron.every((s) => s)) {
    const lines = neverFires(c.dispatch, mergeSlots(cron as Slots[]), `daemon.schedule (${c.daemon.schedule.join(' | ')}, for nightshift daemon)`);
    if (lines.length) fixes.push(`add the rules' hours to daemon.schedule in ${c.file} (e.g. "0 * * * *")`);
    out.push(...lines);
  }
  let timerFailed = false;
  if (timer && timer.specs.length) {
    const reach = calendarReach(c, `the timer (${timer.file}: OnCalendar=${timer.specs.join(', ')})`, timer.specs, pathEnv);
    out.push(...reach.refused.map((r) => `${timer.file}: ${r}`), ...reach.never);
    if (reach.refused.length || reach.never.length) timerFailed = true;
    if (reach.never.length) fixes.push('nightshift systemd install --on-calendar SPEC with a spec that reaches them (hourly reaches every rule)');
  }
  if (!out.length) return ok('schedule', `every dispatch rule can fire under daemon.schedule${timer ? ' and the installed timer' : ''}`);
  const detail = out.join(' | ');
  const fix = fixes.join('; ') || `nightshift systemd install --on-calendar SPEC`;
  return timerFailed ? fail('schedule', detail, fix) : warn('schedule', detail, fix);
}

// `doctor --fix`: only what cannot lose anything: missing folders made, modes narrowed.
export function applyFixes(c: Config, env: EnvFileResult | null): string[] {
  const done: string[] = [];
  for (const [p, mode] of [[c.state_dir, 0o700], [c.log_dir, 0o755]] as const) {
    if (fs.existsSync(p)) continue;
    try {
      fs.mkdirSync(p, { recursive: true, mode });
      done.push(`made ${p}`);
    } catch (err) {
      done.push(`could not make ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  const chmod = (p: string, mode: number, when: (m: number) => boolean) => {
    try {
      const m = fs.statSync(p).mode;
      if (!when(m)) return;
      fs.chmodSync(p, mode);
      done.push(`chmod ${mode.toString(8)} ${p} (was ${octal(m)})`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') done.push(`could not chmod ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  if (env) chmod(env.file, 0o600, readableByOthers);
  const kept = (() => {
    try {
      return sessionGroupBits(fs.statSync(c.state_dir), sessionUserFor(c).user);
    } catch {
      return 0;
    }
  })();
  chmod(c.state_dir, 0o700 | kept, (m) => (m & 0o077 & ~kept) !== 0);
  return done;
}

// Who a root supervisor's sessions run as, and whether that user can do what a session must: pass
// to the folders the wall binds, and write the vault and the extra dirs, tried as that user (every
// entry but .git and .nightshift, which the wall keeps read-only anyway). Null: the supervisor is
// not root (or the session is unwalled), and sessions run as it, as before.
export async function sessionUserCheck(c: Config, uid: number, env: NodeJS.ProcessEnv): Promise<Check | null> {
  const { user, problem } = sessionUserFor(c, { uid });
  if (problem) return fail('session user', problem, /useradd/.test(problem) ? useraddCommand(c.session_user) : `set session_user in ${c.file} to an unprivileged user`);
  if (!user) return null;
  const owner = siteOwner(c, user);
  if (owner) return fail('session user', `nightshift runs as root, whose sessions run as session_user ${user.name}, in a site that is not root's: ${owner.what} ${owner.path} is owned by ${owner.name} (uid ${owner.uid})`, runAsOwner(owner.name, true));
  const reach = reachProblems(c, user, resolveCommand(c.claude.command, env.PATH ?? ''));
  if (reach.length) return fail('session user', reach.join('; '), 'run the commands named above as root, then nightshift doctor again');
  for (const dir of [c.vault, ...c.hooks.extra_dirs].filter((d) => fs.existsSync(d))) {
    const prune = ['.git', '.nightshift'].flatMap((n) => ['-path', path.join(dir, n), '-prune', '-o']);
    const r = await runChild('find', [dir, ...prune, '!', '-writable', '-print', '-quit'], { env: { PATH: env.PATH ?? '/usr/bin:/bin' }, uid: user.uid, gid: user.gid, cwd: '/', timeoutMs: 20_000 });
    const first = r.stdout.trim().split('\n')[0];
    if (first) return fail('session user', `${first} is not writable by session_user ${user.name} (uid ${user.uid}): a session could not change it`, vaultFix(dir, user));
    if (r.exitCode !== 0) return warn('session user', `could not walk ${dir} as ${user.name}: ${(r.stderr || r.error?.message || `exit ${r.exitCode}`).trim().split('\n')[0]}`, vaultFix(dir, user));
  }
  return ok('session user', `sessions run as ${user.name} (uid ${user.uid}, gid ${user.gid}), never root; it can write ${[c.vault, ...c.hooks.extra_dirs].join(', ')}`);
}

// The CLI as the sessions will start it: on the installed units' PATH (their Environment=PATH=,
// else systemd's own), not this shell's; and inside the wall, which hides /tmp. Null: nothing to say.
export function cliReachChecks(c: Config, env: NodeJS.ProcessEnv, unitFile: string): Check[] {
  const out: Check[] = [];
  const unitPathEnv = installedUnitPath(unitFile);
  if (unitPathEnv !== null) {
    const dir = foundIn(c.claude.command, unitPathEnv);
    if (!dir) {
      out.push(fail('unit cli', `${unitFile} runs with PATH=${unitPathEnv}, where \`${c.claude.command}\` is not found: every session the units start would fail (spawn_failed)`,
        `nightshift systemd install --user USER again (it puts the CLI's folder on the units' PATH), or set claude.command in ${c.file} to the CLI's absolute path`));
    } else out.push(ok('unit cli', `${unitFile} finds ${c.claude.command.includes('/') ? c.claude.command : path.join(dir, c.claude.command)}`));
  }
  const cli = c.sandbox === 'bwrap' ? resolveCommand(c.claude.command, env.PATH ?? '') : null;
  const hidden = cli ? hiddenByWall(cli) : null;
  if (hidden) out.push(fail('wall cli', hidden, `install Claude Code outside /tmp and set claude.command in ${c.file}`));
  return out;
}
