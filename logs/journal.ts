// journald levels: when stderr is the journal, each line starts with its syslog priority (`<3>`
// error ... `<7>` debug), which journald strips and records, so `journalctl -p warning` filters.
// The daily log file never carries the prefix.
import fs from 'node:fs';

// pino level -> syslog priority: fatal 2 (crit), error 3, warn 4, info 6, debug and trace 7.
export function syslogPriority(pinoLevel: number): number {
  if (pinoLevel >= 60) return 2;
  if (pinoLevel >= 50) return 3;
  if (pinoLevel >= 40) return 4;
  if (pinoLevel >= 30) return 6;
  return 7;
}

// Prefixes one pino JSON line (`{"level":30,...}`); a line without a level is info.
export function withPriority(line: string): string {
  const m = /"level":(\d+)/.exec(line.slice(0, 40));
  return `<${syslogPriority(m ? Number(m[1]) : 30)}>${line}`;
}

// systemd sets JOURNAL_STREAM=<device>:<inode> of the stream it connected; stderr is the journal
// only while fd 2 is still that stream (a shell inside the unit may have redirected it).
export function stderrIsJournal(journalStream: string | undefined, fstat: () => { dev: number; ino: number } = () => fs.fstatSync(2)): boolean {
  const m = /^(\d+):(\d+)$/.exec(journalStream ?? '');
  if (!m) return false;
  try {
    const s = fstat();
    return String(s.dev) === m[1] && String(s.ino) === m[2];
  } catch {
    return false;
  }
}

// Plain text for stderr (an error message before any logger exists): every line gets `priority`.
export function prefixLines(text: string, priority: number, journal: boolean): string {
  return journal ? text.replace(/^(?=.)/gm, `<${priority}>`) : text;
}
