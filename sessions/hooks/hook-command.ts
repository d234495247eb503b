// `nightshift hook pre-tool-use`: the same guardrail as a command hook, for an operator's own
// interactive Claude Code. The payload comes on stdin; stdout carries only the hook's JSON (a deny;
// nothing for an allow). A payload that is not JSON, or lacks fields, is logged to stderr and
// allowed: exit 0 whatever happens, so a broken hook never wedges the operator's session.
import os from 'node:os';
import type { Readable } from 'node:stream';
import { terminalText } from '../../logs/terminal-text.js';
import { guard } from './guardrail.js';
import { hookAnswer, parsePreToolUse } from './hook-server.js';

export type HookCommandIo = {
  stdin: Readable;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  // The config's vault and extra dirs, when a config could be loaded; else null.
  loadRoots: () => Promise<{ vault: string; extraDirs: string[] } | null>;
  redact: (text: string) => string;
};

const MAX_STDIN = 16 * 1024 * 1024;

// The payload's words reach the operator's terminal: C1 and bidi as `\u` escapes too (still JSON).
const log = (io: HookCommandIo, level: 'warn' | 'info', event: string, msg: string, extra: object = {}) =>
  io.stderr(`${terminalText(JSON.stringify({ level, time: new Date().toISOString(), event, ...extra, msg: io.redact(msg) }))}\n`);

async function readAll(stdin: Readable): Promise<{ text: string; size: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stdin) {
    const b = Buffer.isBuffer(c) ? c : Buffer.from(String(c));
    size += b.length;
    if (size <= MAX_STDIN) chunks.push(b);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), size };
}

export async function hookCommand(positionals: string[], io: HookCommandIo): Promise<number> {
  if (positionals.length !== 1 || positionals[0] !== 'pre-tool-use') {
    log(io, 'warn', 'hook_usage', `Expected \`nightshift hook pre-tool-use\`, got \`${positionals.join(' ')}\`: allowed`);
    return 0;
  }
  try {
    const { text, size } = await readAll(io.stdin);
    if (size > MAX_STDIN) {
      log(io, 'warn', 'hook_bad_payload', `payload of ${size} bytes is over ${MAX_STDIN}: allowed unchecked`);
      return 0;
    }
    const p = parsePreToolUse(text);
    if ('error' in p) {
      log(io, 'warn', 'hook_bad_payload', `${p.error}: allowed`);
      return 0;
    }
    let roots: { vault: string; extraDirs: string[] } | null = null;
    try {
      roots = await io.loadRoots();
    } catch (err) {
      log(io, 'warn', 'hook_no_config', `no nightshift config (${(err as Error).message.split('\n')[0]}): guarding the project folder alone`);
    }
    // The project the session runs in is writable; so are the vault and extra dirs of the config.
    const project = p.call.cwd ?? io.cwd;
    const verdict = guard(p.call, { vault: project, extraDirs: roots ? [roots.vault, ...roots.extraDirs] : [], home: os.homedir() });
    if (!verdict.allow) {
      log(io, 'info', 'hook_block', verdict.reason, { tool: p.call.tool_name });
      io.stdout(`${JSON.stringify(hookAnswer(verdict))}\n`);
    }
  } catch (err) {
    log(io, 'warn', 'hook_error', `the guardrail failed: ${(err as Error)?.message ?? String(err)}: allowed`);
  }
  return 0;
}
