// The shell as the guardrail reads it (sessions/hooks/guardrail/shell.ts): wrappers, nested shells,
// substitutions, redirects, control words and `cd`s do not carry a dangerous command past it; plain
// commands, quoted text and comments are not taken for one.
import { bash, guardTable, type Row } from './table.js';

const DANGEROUS: Row[] = [
  ['sudo rm -rf /', bash('sudo rm -rf /')],
  ['/bin/rm -rf ~', bash('/bin/rm -rf ~')],
  ['\\rm -rf ~', bash('\\rm -rf ~')],
  ['env FOO=1 rm -rf ~', bash('env FOO=1 rm -rf ~')],
  ['chained after echo', bash('echo ok && rm -rf ~/x')],
  ['after a semicolon', bash('ls; rm -rf /')],
  ['in a pipe with xargs', bash('echo / | xargs rm -rf')],
  ['bash -c', bash('bash -c "rm -rf ~"')],
  ['sh -c nested quotes', bash(`sh -c 'rm -rf "$HOME"'`)],
  ['eval', bash('eval rm -rf /')],
  ['in a substitution', bash('echo $(rm -rf ~)')],
  ['in backticks', bash('echo `rm -rf /`')],
  ['cd / then rm', bash('cd / && rm -rf etc')],
  ['cd .. then rm', bash('cd .. && rm -rf vault')],
  ['cd to a variable then rm', bash('cd "$X" && rm -rf build')],
  ['redirect into /etc', bash('echo x > /etc/hosts')],
  ['append to ~/.bashrc', bash('echo evil >> ~/.bashrc')],
  ['write into .git', bash('echo x > .git/config')],
  ['rm -rf /* inside if/then', bash('if true; then rm -rf /*; fi')],
  ['rm -rf .. inside a for loop', bash('for x in 1; do rm -rf ..; done')],
  ['! rm -rf ~', bash('! rm -rf ~')],
  ['time -p rm -rf /*', bash('time -p rm -rf /*')],
  ['env -i rm -rf /*', bash('env -i rm -rf /*')],
  ['env -S with a command line', bash("env -S 'rm -rf /'")],
  ['sudo -E rm -rf /*', bash('sudo -E rm -rf /*')],
  ['sudo -n rm -rf /*', bash('sudo -n rm -rf /*')],
  ['command -p rm -rf /*', bash('command -p rm -rf /*')],
  ['exec -a x rm -rf /*', bash('exec -a x rm -rf /*')],
  ['a command name from a variable', bash('rm$IFS-rf$IFS~')],
];

const HARMLESS: Row[] = [
  ['echo', bash('echo hello')],
  ['ls -la', bash('ls -la')],
  ['redirect into the vault', bash('echo x > notes/today.md')],
  ['2>/dev/null and 2>&1', bash('ls missing 2>/dev/null; ls 2>&1 | head')],
  ['&>/dev/null', bash('make &>/dev/null')],
  ['cat a file outside (a read)', bash('cat /etc/hostname')],
  ['grep outside (a read)', bash('grep -r TODO /usr/share/doc | head -5')],
  ['extra dir write', bash('echo x > /srv/shared/out.txt')],
  ['cd into the vault subdir then write', bash('cd notes && touch index.md')],
  ['a comment mentioning rm -rf /', bash('echo safe # rm -rf /')],
  ['quoted text mentioning rm -rf ~', bash('echo "do not rm -rf ~"')],
  ['a loop over vault files', bash('for f in notes/*.md; do wc -l "$f"; done')],
  ['if/then with an echo', bash('if [ -f a.md ]; then echo yes; fi')],
  ['JSON in quotes', bash(`echo '{"a":1,"b":2}' > data.json`)],
];

guardTable(DANGEROUS, HARMLESS);
