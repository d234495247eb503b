// Users as /etc/passwd names them: the service user `systemd install` makes folders for, and the
// unprivileged user a root supervisor runs its sessions as (config/session-user.ts).
import fs from 'node:fs';

export type PasswdEntry = { name: string; uid: number; gid: number };

// The user's uid and gid from /etc/passwd, or null when it has no entry there.
export function passwdEntry(user: string, passwd = '/etc/passwd'): PasswdEntry | null {
  let text = '';
  try {
    text = fs.readFileSync(passwd, 'utf8');
  } catch {
    return null;
  }
  const line = text.split('\n').find((l) => l.split(':')[0] === user);
  return line ? { name: user, uid: Number(line.split(':')[2]), gid: Number(line.split(':')[3]) } : null;
}

// The command that makes a system user of nightshift's own: no home, no login.
export const useraddCommand = (user: string) => `useradd --system --no-create-home --shell /usr/sbin/nologin ${user}`;
