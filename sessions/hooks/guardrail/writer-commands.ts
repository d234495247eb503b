// The commands that write a file they name: each one's targets (the last operand of cp, the -o of
// curl, the of= of dd, the files of sed -i ...) must land where a write may (write-paths.ts).
import type { Word } from './shell-lexer.js';
import { firstOutside, type CommandRule } from './shell-words.js';

// Every operand is a target, but chmod's, chown's and chgrp's first (the mode or owner) and
// truncate's sizes.
const touching: CommandRule = ({ name, operands, ctx }) => {
  const targets = name === 'chmod' || name === 'chown' || name === 'chgrp' ? operands.slice(1) : operands;
  if (name === 'truncate') return firstOutside(operands.filter((w) => !/^\d/.test(w.text)), name, ctx);
  return firstOutside(targets, name, ctx);
};

const link: CommandRule = ({ name, operands, ctx }) => firstOutside(operands, name, ctx);

const copy: CommandRule = ({ name, args, operands, ctx }) => {
  // -t DIR / -tDIR / --target-directory=DIR / --target-directory DIR: the destination is DIR.
  const dest: Word[] = [];
  args.forEach((a, k) => {
    if ((a.text === '-t' || a.text === '--target-directory') && args[k + 1]) dest.push(args[k + 1]);
    else if (/^-t./.test(a.text)) dest.push({ ...a, text: a.text.slice(2) });
    else if (a.text.startsWith('--target-directory=')) dest.push({ ...a, text: a.text.slice('--target-directory='.length) });
  });
  if (!dest.length) dest.push(...operands.slice(-1));
  if (dest.some((d) => name === 'scp' || name === 'rsync' ? /^[^/]*:/.test(d.text) : false)) return null;
  return firstOutside(dest.length ? dest : operands.slice(-1), name, ctx);
};

// Where they write: curl -o/--output, wget -O/--output-document/-P, tar/unzip -C/-d DIR.
const OUTPUT_OPTIONS: Record<string, string[]> = { curl: ['-o', '--output'], wget: ['-O', '--output-document', '-P', '--directory-prefix'], tar: ['-C', '--directory'], unzip: ['-d'] };

const download: CommandRule = ({ name, args, ctx }) => {
  const targets: Word[] = [];
  args.forEach((a, k) => {
    for (const o of OUTPUT_OPTIONS[name]) {
      if (o.startsWith('--')) {
        if (a.text === o && args[k + 1]) targets.push(args[k + 1]);
        else if (a.text.startsWith(`${o}=`)) targets.push({ ...a, text: a.text.slice(o.length + 1) });
        continue;
      }
      // Short options, alone or last in a cluster (-qO FILE), or with the value attached (-OFILE).
      const letter = o[1];
      if (new RegExp(`^-[a-zA-Z]*${letter}$`).test(a.text) && args[k + 1]) targets.push(args[k + 1]);
      else if (a.text.startsWith(o) && a.text.length > 2 && name !== 'tar') targets.push({ ...a, text: a.text.slice(2) });
    }
  });
  return firstOutside(targets.filter((w) => w.text !== '-'), name, ctx);
};

const dd: CommandRule = ({ args, ctx }) => {
  const of = args.find((a) => a.text.startsWith('of='));
  return of ? firstOutside([{ ...of, text: of.text.slice(3) }], 'dd of=', ctx) : null;
};

// In place only: sed's first operand is its script unless -e or -f gave it.
const inPlace: CommandRule = ({ name, flags, operands, ctx }) => {
  if (!flags.some((f) => /^-[a-zA-Z]*i/.test(f) || f.startsWith('--in-place'))) return null;
  const files = name === 'sed' && !flags.some((f) => f === '-e' || f === '-f') ? operands.slice(1) : operands;
  return firstOutside(files, `${name} -i`, ctx);
};

export const WRITER_RULES: Record<string, CommandRule> = {
  touch: touching, mkdir: touching, truncate: touching, tee: touching, mv: touching, chmod: touching, chown: touching, chgrp: touching, mkfifo: touching, mknod: touching,
  ln: link,
  cp: copy, install: copy, rsync: copy, scp: copy,
  curl: download, wget: download, tar: download, unzip: download,
  dd,
  sed: inPlace, perl: inPlace,
};
