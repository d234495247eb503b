// The session's subreaper. A tool's grandchild that clears its environment (`setsid env -i ...`)
// carries no marker, and once its parent exits it is reparented to init, where the tree walk
// cannot see it either. A child subreaper (prctl PR_SET_CHILD_SUBREAPER) between us and the CLI
// inherits every such orphan instead: while the session runs, all its processes stay below the
// reaper, and when the CLI exits the reaper ends whatever is left before it exits itself.
//
// Node cannot call prctl, and a native addon would be a build step on every host, so the reaper is
// a few lines of perl (perl-base is Essential on Debian, present on every such VPS). Where perl is
// missing the CLI runs directly and the marker plus the tree walk remain (documented fallback).
import fs from 'node:fs';
import path from 'node:path';

// Exit code and stderr line by which the reaper says the CLI itself could not be started.
export const EXEC_FAILED_CODE = 127;
export const EXEC_FAILED_RE = /nightshift-reaper: exec failed: errno (\d+)/;

// Linux syscall numbers of prctl, by machine.
const SCRIPT = String.raw`
use strict; use POSIX ();
my %nr = (x86_64 => 157, aarch64 => 167, armv7l => 172, i686 => 172, i386 => 172, riscv64 => 167, ppc64le => 171, s390x => 172);
my $nr = $nr{(POSIX::uname())[4]};
(defined $nr && syscall($nr, 36, 1, 0, 0, 0) == 0) or print STDERR "nightshift-reaper: PR_SET_CHILD_SUBREAPER unavailable\n";
my $child = fork();
defined $child or do { print STDERR "nightshift-reaper: fork failed: $!\n"; exit 70 };
if ($child == 0) {
  exec { $ARGV[0] } @ARGV;
  print STDERR "nightshift-reaper: exec failed: errno " . ($!+0) . " ($!)\n";
  POSIX::_exit(127);
}
for my $s (qw(INT TERM HUP)) { $SIG{$s} = sub { kill $s, $child } }
sub below {
  my %kids;
  opendir(my $d, '/proc') or return ();
  for my $p (grep { /^\d+$/ } readdir $d) {
    open(my $f, '<', "/proc/$p/stat") or next; my $st = <$f>; close $f; next unless defined $st;
    my @r = split / /, substr($st, rindex($st, ')') + 2);
    push @{$kids{$r[1]}}, $p unless $r[0] eq 'Z';
  }
  my @out; my @q = @{$kids{$$} || []};
  while (@q) { my $p = shift @q; push @out, $p; push @q, @{$kids{$p} || []} }
  return @out;
}
my $status;
while (1) {
  my $w = waitpid(-1, 0);
  if ($w == $child) { $status = $?; last }
  last if $w == -1 && !$!{EINTR};
}
# The CLI is gone: everything still below us is left over from the session.
my @left = below();
if (@left) {
  kill 'TERM', @left;
  for (1 .. 20) { 1 while waitpid(-1, POSIX::WNOHANG()) > 0; last unless below(); select(undef, undef, undef, 0.05) }
  for (1 .. 50) { my @p = below(); last unless @p; kill 'STOP', @p; kill 'KILL', @p; 1 while waitpid(-1, POSIX::WNOHANG()) > 0; select(undef, undef, undef, 0.02) }
}
1 while waitpid(-1, POSIX::WNOHANG()) > 0;
if ($status & 127) { my $sig = $status & 127; $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP); kill $sig, $$; POSIX::_exit(128 + $sig) }
exit($status >> 8);
`;

// The perl on PATH, or null. Looked up once per process.
let perlPath: string | null | undefined;
export function findPerl(envPath = process.env.PATH ?? ''): string | null {
  if (perlPath !== undefined) return perlPath;
  perlPath = null;
  for (const dir of envPath.split(':').filter(Boolean)) {
    const p = path.join(dir, 'perl');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      perlPath = p;
      break;
    } catch {
      // not here
    }
  }
  return perlPath;
}

// The command line that runs `command args` under the reaper, or null where it cannot.
export function reaped(command: string, args: string[]): { command: string; args: string[] } | null {
  const perl = findPerl();
  return perl ? { command: perl, args: ['-e', SCRIPT, '--', command, ...args] } : null;
}
