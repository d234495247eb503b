// What refuses a chosen session before anything is pulled or charged, each with its fix: a
// permission mode the CLI would refuse, no credential, a rehearsal's key in the real site, the key
// the API already refused today (exit 78 each, naming the file to change).
import fs from 'node:fs';
import path from 'node:path';
import { permissionCheck } from '../health/doctor-setup.js';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { ConfigError, EnvFileError } from '../../core/errors.js';
import { credentialFrom } from '../../sessions/wall/api-proxy.js';
import { REHEARSAL_KEY_PREFIX, rehearsalCredential } from '../../config/rehearsal.js';
import { ENV_FILE_VAR } from '../../config/env-file.js';
import { credentialFingerprint, envFileIdentity, hhmm, readRefusal, refusedKeyMessage, refusedKeyVerdict } from '../../budget/credential-refusal.js';
import type { RunDeps } from './types.js';

export function refuseBeforeCharge(config: Config, agent: Agent, day: string, deps: RunDeps): void {
  if (!fs.existsSync(config.vault) || !fs.statSync(config.vault).isDirectory()) {
    throw new ConfigError(config.file, [`vault: Expected an existing directory, got \`${config.vault}\``]);
  }
  // The CLI refuses bypassPermissions as root: unwalled (no session_user), root's session would be
  // charged only to fail. Refused here, with doctor's fix. Walled, it runs as session_user.
  const permission = permissionCheck(config, [agent], process.getuid?.() ?? -1, deps.env);
  if (permission.status === 'fail') throw new ConfigError(config.file, [`claude.permission_mode: ${permission.detail}; fix: ${permission.fix}`]);
  // No credential at all: every call would fail (the CLI retries for minutes, then blames the
  // server). Refused here, before the pull and the charge, naming the env file (exit 78).
  const credential = credentialFrom(deps.env);
  if (!credential) {
    const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
    throw new EnvFileError(envFile, [`no credential: neither ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN nor ANTHROPIC_AUTH_TOKEN is set, in the environment or ${envFile}; nothing was started or charged. Fix: put ANTHROPIC_API_KEY=... (or CLAUDE_CODE_OAUTH_TOKEN=..., from \`claude setup-token\`) in ${envFile}, chmod 600 it, then \`nightshift doctor\``]);
  }
  // A rehearsal's key outside a rehearsal: the env file still points at `rehearse --serve`. Its
  // session would leave fake costs, memories and commits in the real site; refused, uncounted.
  const rehearsing = rehearsalCredential(deps.env);
  if (rehearsing && !config.rehearsal) {
    const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
    throw new EnvFileError(envFile, [`${rehearsing} is a rehearsal's key (${REHEARSAL_KEY_PREFIX}…): a session with it would write the imitation's answers and costs into this site's ledger, memory and vault; nothing was started or charged. Fix: take the ANTHROPIC_BASE_URL and ${rehearsing} lines \`nightshift rehearse --serve\` printed out of ${envFile} and put the real key back (\`nightshift rehearse AGENT\` rehearses in state of its own, with no env file change)`]);
  }
  // The same key the API already refused today (budget/credential-refusal.ts): it would fail the
  // same way, after the charge. Refused here too, with the same exit (78) and the same file named.
  const refused = refusedKeyVerdict(readRefusal(config.state_dir), { fingerprint: credentialFingerprint(credential.value), day });
  if (refused) {
    const envFile = deps.env[ENV_FILE_VAR] ?? path.join(config.dir, 'nightshift.env');
    throw new EnvFileError(envFile, [refusedKeyMessage(refused, { envFile, agent: agent.name, hhmm: hhmm(refused.at, config.budget.timezone), envNow: envFileIdentity(envFile) })]);
  }
}
