// The commands that write a file they name (sessions/hooks/guardrail/writer-commands.ts): each one's
// targets must land inside the vault or an extra dir; reads and writes into the vault run.
import { bash, guardTable, type Row } from './table.js';

const DANGEROUS: Row[] = [
  ['tee outside', bash('echo x | tee /tmp/out.txt')],
  ['cp to outside', bash('cp notes.md /root/')],
  ['mv from outside', bash('mv ../other/file.md .')],
  ['touch outside', bash('touch /var/tmp/flag')],
  ['chmod -R /', bash('chmod -R 777 /')],
  ['dd of=/dev/sda', bash('dd if=/dev/zero of=/dev/sda')],
  ['sed -i outside', bash("sed -i 's/a/b/' /etc/passwd")],
  ['ln -s to /etc', bash('ln -s /etc/passwd passwd-link')],
  ['cp -t outside', bash('cp -t /etc/cron.d evil')],
  ['curl -o outside', bash('curl -sSL https://example.org/x -o /etc/cron.d/x')],
  ['wget -O outside', bash('wget -qO ~/.profile https://example.org/x')],
  ['tar -C outside', bash('tar -xzf pkg.tgz -C /usr/local')],
  ['unzip -d outside', bash('unzip a.zip -d /opt')],
];

const HARMLESS: Row[] = [
  ['cp from outside into the vault', bash('cp /etc/hostname ./hostname.txt')],
  ['mkdir -p in the vault', bash('mkdir -p research/2026')],
  ['sed -i in the vault', bash("sed -i 's/a/b/' notes/a.md")],
  ['tee in the vault', bash('date | tee -a journal.md')],
  ['curl to stdout', bash('curl -sS https://example.org/api | head')],
  ['curl -o into the vault', bash('curl -sSL https://example.org/x -o research/x.html')],
  ['tar -C into the vault', bash('tar -xzf pkg.tgz -C vendor')],
];

guardTable(DANGEROUS, HARMLESS);
