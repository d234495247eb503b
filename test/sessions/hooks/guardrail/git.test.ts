// git is nightshift's to run (sessions/hooks/guardrail/git.ts): never pointed outside the vault, never
// its hooks, aliases or global config; the session's everyday git runs.
import { bash, guardTable, type Row } from './table.js';

const DANGEROUS: Row[] = [
  ['git -C outside', bash('git -C /srv/other reset --hard')],
  ['git config core.hooksPath', bash('git config core.hooksPath .githooks')],
  ['git config --global', bash('git config --global core.hooksPath /tmp/h')],
  ['git --work-tree outside', bash('git --work-tree=/etc checkout .')],
  ['git --git-dir outside', bash('git --git-dir=/etc/x init')],
  ['git -C attached', bash('git -C/etc init')],
];

const HARMLESS: Row[] = [
  ['git status', bash('git status --porcelain')],
  ['git commit', bash('git add -A && git commit -m "notes"')],
  ['git log with a format', bash("git log -1 --format='%h %s'")],
];

guardTable(DANGEROUS, HARMLESS);
