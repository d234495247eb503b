// The wall's network bridge. A walled session has a network namespace of its own: a loopback and
// nothing else, so no service of the host (loopback, [::1], link-local, abstract sockets) answers
// it. The supervisor's endpoints listen on unix sockets in the session's folder; inside the wall,
// this bridge listens on the namespace's 127.0.0.1 and pipes each connection to its socket, then
// runs the CLI as its child and exits as the CLI did.
//
// perl, like the subreaper (sessions/run/reaper.ts): perl-base is Essential on Debian and starts in
// a few milliseconds, where a second node would cost tens before the CLI could start.

// Exit code and stderr line by which the bridge says it could not listen (the session never ran).
export const BRIDGE_FAILED_CODE = 71;
export const BRIDGE_FAILED_RE = /nightshift-bridge: (.*)/;

const SCRIPT = String.raw`
use strict; use POSIX (); use Socket; use IO::Socket::INET; use IO::Socket::UNIX;
my (@routes, %to);
while (@ARGV && $ARGV[0] ne '--') { my $r = shift @ARGV; my ($port, $path) = $r =~ /^(\d+)=(.+)$/ or die "nightshift-bridge: bad route $r\n"; push @routes, [$port, $path] }
shift @ARGV;
sub fail { print STDERR "nightshift-bridge: $_[0]\n"; POSIX::_exit(71) }
my @listen;
for my $r (@routes) {
  my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $r->[0], Listen => 128, ReuseAddr => 1, Proto => 'tcp') or fail("cannot listen on 127.0.0.1:$r->[0]: $!");
  $to{fileno $l} = $r->[1]; push @listen, $l;
}
my $child = fork();
defined $child or fail("fork failed: $!");
if ($child == 0) {
  close $_ for @listen;
  exec { $ARGV[0] } @ARGV;
  print STDERR "nightshift-reaper: exec failed: errno " . ($!+0) . " ($!)\n";
  POSIX::_exit(127);
}
for my $s (qw(INT TERM HUP)) { $SIG{$s} = sub { kill $s, $child } }
# The CLI's end interrupts the wait below at once (its 0.2 s timeout would otherwise be added to
# every session's end): measured by npm run bench wall-parts.
$SIG{CHLD} = sub {};
sub pump {
  my ($a, $b) = @_; my %open = (fileno $a => [$a, $b], fileno $b => [$b, $a]);
  while (%open) {
    my $rin = ''; vec($rin, $_, 1) = 1 for keys %open;
    my $n = select(my $rout = $rin, undef, undef, undef);
    if ($n < 0) { next if $!{EINTR}; last }
    for my $fd (keys %open) {
      next unless vec($rout, $fd, 1);
      my ($from, $to) = @{$open{$fd}};
      my $got = sysread($from, my $buf, 65536);
      if (!$got) { next if !defined $got && $!{EINTR}; delete $open{$fd}; shutdown($to, 1); next }
      my $off = 0;
      while ($off < $got) { my $w = syswrite($to, $buf, $got - $off, $off); if (!defined $w) { next if $!{EINTR}; return } $off += $w }
    }
  }
}
my $status;
while (1) {
  my $done;
  while ((my $w = waitpid(-1, POSIX::WNOHANG())) > 0) { if ($w == $child) { $status = $?; $done = 1 } }
  last if $done;
  my $rin = ''; vec($rin, fileno $_, 1) = 1 for @listen;
  my $n = select(my $rout = $rin, undef, undef, 0.2);
  next unless $n > 0;
  for my $l (@listen) {
    next unless vec($rout, fileno $l, 1);
    my $c = $l->accept or next;
    my $pid = fork();
    if (defined $pid && $pid == 0) {
      $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP);
      my $path = $to{fileno $l};
      close $_ for @listen;
      my $u = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path) or POSIX::_exit(1);
      pump($c, $u); POSIX::_exit(0);
    }
    close $c;
  }
}
if ($status & 127) { my $sig = $status & 127; $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP); kill $sig, $$; POSIX::_exit(128 + $sig) }
POSIX::_exit($status >> 8);
`;

export type BridgeRoute = { port: number; socket: string };

// The command line that runs `command args` behind the bridge's routes.
export function bridged(perl: string, routes: BridgeRoute[], command: string, args: string[]): { command: string; args: string[] } {
  return { command: perl, args: ['-e', SCRIPT, '--', ...routes.map((r) => `${r.port}=${r.socket}`), '--', command, ...args] };
}

// The ports the endpoints have inside the wall: the namespace is the session's own, so fixed ones
// collide with nothing.
export const WALL_PORTS = { api: 41001, hooks: 41002, memory: 41003, egress: 41004 } as const;
export const wallUrl = (port: number) => `http://127.0.0.1:${port}`;
