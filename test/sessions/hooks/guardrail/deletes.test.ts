// Deletes (sessions/hooks/guardrail/deletes.ts): rm -r and find -delete/-exec never take `/`, `~`,
// `$HOME`, `..`, `.*`, the home directory or the vault itself; deletes inside the vault run.
import { bash, guardTable, type Row } from './table.js';

const DANGEROUS: Row[] = [
  ['rm -rf /', bash('rm -rf /')],
  ['rm -rf /*', bash('rm -rf /*')],
  ['rm -rf ~', bash('rm -rf ~')],
  ['rm -rf ~/', bash('rm -rf ~/')],
  ['rm -rf ~/notes', bash('rm -rf ~/notes')],
  ['rm -fr ~other', bash('rm -fr ~other')],
  ['rm -rf $HOME', bash('rm -rf $HOME')],
  ['rm -rf "$HOME"', bash('rm -rf "$HOME"')],
  ['rm -rf ${HOME}/x', bash('rm -rf ${HOME}/x')],
  ['rm -rf ..', bash('rm -rf ..')],
  ['rm -rf ../', bash('rm -rf ../')],
  ['rm -rf notes/../..', bash('rm -rf notes/../..')],
  ['rm -r -f /etc', bash('rm -r -f /etc')],
  ['rm --recursive --force /', bash('rm --recursive --force /')],
  ['rm -Rf /usr', bash('rm -Rf /usr')],
  ['rm -rf .', bash('rm -rf .')],
  ['rm -rf .*', bash('rm -rf .*')],
  ['rm -rf /srv/vault', bash('rm -rf /srv/vault')],
  ['rm -rf -- /', bash('rm -rf -- /')],
  ['rm -rf {..,x} (brace expansion)', bash('rm -rf {..,x}')],
  ['rm -rf {/home/op,x}', bash('rm -rf {/home/op,x}')],
  ['find / -delete', bash('find / -name x -delete')],
  ['find ~ -exec rm', bash('find ~ -type f -exec rm {} \\;')],
];

const HARMLESS: Row[] = [
  ['rm one file in the vault', bash('rm old.md')],
  ['rm -rf a vault folder', bash('rm -rf build/')],
  ['rm -rf a glob in the vault', bash('rm -rf drafts/*.tmp')],
  ['rm -rf * in the vault', bash('rm -rf *')],
  ['find in the vault with -delete and a name', bash("find . -name '*.tmp' -delete")],
];

guardTable(DANGEROUS, HARMLESS);
