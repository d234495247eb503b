// git is nightshift's to run: a session's git may not be pointed outside the vault (-C,
// --git-dir, --work-tree), nor set the hooks, aliases or global config that our own git would run
// after the session, outside the watchdog.
import type { Word } from './shell-lexer.js';
import { firstOutside, type CommandRule } from './shell-words.js';

const git: CommandRule = ({ args, ctx }) => {
  // git may write anywhere it is pointed: -C DIR and --git-dir / --work-tree outside the vault.
  const pointed: Word[] = [];
  args.forEach((a, k) => {
    if ((a.text === '-C' || a.text === '--git-dir' || a.text === '--work-tree') && args[k + 1]) pointed.push(args[k + 1]);
    else if (/^-C./.test(a.text)) pointed.push({ ...a, text: a.text.slice(2) });
    else if (/^--(git-dir|work-tree)=/.test(a.text)) pointed.push({ ...a, text: a.text.slice(a.text.indexOf('=') + 1) });
  });
  const why = firstOutside(pointed, 'git pointed at', ctx);
  if (why) return why;
  // Its config is nightshift's (hooks it would run after the session, outside the watchdog).
  const sub = args.find((a) => !a.text.startsWith('-') && !pointed.includes(a));
  if (sub?.text === 'config' && args.some((a) => /^--(global|system)$|^core\.hookspath$|^core\.fsmonitor$|^alias\./i.test(a.text))) {
    return 'git config of hooks, aliases or the global/system config (git is nightshift\'s to run)';
  }
  if (args.some((a) => /^core\.hookspath=|^core\.fsmonitor=/i.test(a.text))) return 'git -c core.hooksPath/fsmonitor (git is nightshift\'s to run)';
  return null;
};

export const GIT_RULES: Record<string, CommandRule> = { git };
