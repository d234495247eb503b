// The wall's network bridge. A walled session has a network namespace of its own: a loopback and
// nothing else, so no service of the host (loopback, [::1], link-local, abstract sockets) answers
// it. The supervisor's endpoints listen on unix sockets in a folder of the session's that the wall
// hides (a path socket answers through a read-only bind, whoever connects); the bridge alone holds
// that folder, as a descriptor the supervisor hands it, and pipes each connection it accepts on
// the namespace's 127.0.0.1 (hooks, memory, egress) to its socket there. Then it runs the CLI as
// its child and exits as the CLI did, dropping any connection still open.
//
// Every connection is carried by the bridge's one select loop, no process per connection: a fork
// added 2.1 ms to each new connection (the CLI's hook opens one per tool call) and took one of the
// session's pids. Each direction's buffer is bounded, so a peer that does not read holds a bounded
// amount here and stalls no other connection (test/sessions/wall/bridge.test.ts).
//
// The API is not on the loopback: the CLI reaches it over ANTHROPIC_UNIX_SOCKET (a socket the
// bridge listens on inside the wall), and the bridge pipes a connection only when the kernel says
// (SO_PEERCRED) that its peer is the CLI's own pid, so no other process of the session (a Bash
// tool's curl with the token from its environment) can spend through the proxy or make the call
// the proxy's view of the outcome rests on (sessions/run/outcome.ts checkedByProxy). Any other
// peer is closed unanswered and reported, pid and name, on the `refused` socket, which the
// supervisor counts. Observed with 2.1.197 (a relay logging each peer's pid): every API call, a
// subagent's (Task) included, came from the CLI's own pid over that socket, an API key's and an
// OAuth token's alike, with HTTP(S)_PROXY and NO_PROXY set (its fetch takes the socket before any
// proxy); the base URL gives only the Host header and the path. Its other traffic (CONNECTs to
// api.anthropic.com:443 through the proxy, the same without the socket) is not the API's route.
//
// perl, like the subreaper (sessions/run/reaper.ts): perl-base is Essential on Debian and starts in
// a few milliseconds, where a second node would cost tens before the CLI could start.

// Exit code and stderr line by which the bridge says it could not listen, or could not check the
// API's peers (the session never ran).
export const BRIDGE_FAILED_CODE = 71;
export const BRIDGE_FAILED_RE = /nightshift-bridge: (.*)/;

// No module is loaded, as in the shell prefix (sessions/wall/landlock.ts): POSIX, Socket and
// IO::Socket cost ~23 ms before the CLI could start (perl alone starts in ~3). The kernel's numbers
// instead, the same on both machines nightshift knows (asm-generic): AF_UNIX 1, AF_INET 2,
// SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2, SO_PEERCRED 17, F_GETFL 3, F_SETFL 4, O_NONBLOCK
// 0x800, EINTR 4, EAGAIN 11, WNOHANG 1.
const ARCHES = ['x64', 'arm64'];
function known(arch: string): void {
  if (!ARCHES.includes(arch)) throw new Error(`no network bridge for this machine (${arch}): nightshift knows the socket numbers of ${ARCHES.join(', ')} only`);
}
const HELPERS = String.raw`
sub again { my $e = $! + 0; $e == 11 || $e == 4 }
sub nonblocking { my $f = fcntl($_[0], 3, 0); defined $f && fcntl($_[0], 4, $f | 0x800) }
sub unix_addr { length($_[0]) < 108 or fail("socket path too long: $_[0]"); pack('S a108', 1, $_[0]) }
`;

// The API's check, tried on a socket pair before anything listens: a kernel that does not answer
// SO_PEERCRED with this process refuses the session here (and in the sandbox probe).
const PEER_CHECK = String.raw`
  socketpair(my $x, my $y, 1, 1, 0) or fail("socketpair: $!");
  my $cred = getsockopt($x, 1, 17);
  my ($pid) = defined $cred ? unpack('l', $cred) : ();
  (defined $pid && $pid == $$) or fail("SO_PEERCRED did not name this process (" . ($pid // "error: $!") . "): the API's peers cannot be checked");
`;

const SCRIPT = String.raw`
use strict;
sub fail { print STDERR "nightshift-bridge: $_[0]\n"; exit 71 }${HELPERS}
my (@tcp, @unix, $dirfd, $refused);
while (@ARGV && $ARGV[0] ne '--') {
  my $r = shift @ARGV;
  if ($r =~ /^dir=(\d+)$/) { $dirfd = $1 }
  elsif ($r =~ /^refused=(.+)$/) { $refused = $1 }
  elsif ($r =~ /^(\d+)=(.+)$/) { push @tcp, [$1, $2] }
  elsif ($r =~ /^unix(-any)?:([^=]+)=(.+)$/) { push @unix, [$2, $3, !$1] }
  else { fail("bad route $r") }
}
shift @ARGV;
if (grep { $_->[2] } @unix) {${PEER_CHECK}}
my (@listen, %to, %only);
for my $r (@tcp) {
  my $l;
  (socket($l, 2, 1, 0) && setsockopt($l, 1, 2, 1) && bind($l, pack('S n C4 x8', 2, $r->[0], 127, 0, 0, 1)) && listen($l, 128)) or fail("cannot listen on 127.0.0.1:$r->[0]: $!");
  $to{fileno $l} = $r->[1]; push @listen, $l;
}
for my $r (@unix) {
  unlink $r->[0];
  my $l;
  (socket($l, 1, 1, 0) && bind($l, unix_addr($r->[0])) && listen($l, 128)) or fail("cannot listen on $r->[0]: $!");
  $to{fileno $l} = $r->[1]; $only{fileno $l} = $r->[2]; push @listen, $l;
}
my $child = fork();
defined $child or fail("fork failed: $!");
if ($child == 0) {
  close $_ for @listen;
  # The folder of the supervisor's sockets is the bridge's alone: never the CLI's, nor its tools'.
  if (defined $dirfd && open(my $d, '<&=', $dirfd)) { close $d }
  exec { $ARGV[0] } @ARGV;
  print STDERR "nightshift-reaper: exec failed: errno " . ($!+0) . " ($!)\n";
  exit 127;
}
# From here the routes' names are the supervisor's sockets in that folder.
if (defined $dirfd) {
  open(my $d, '<&=', $dirfd) or fail("fd $dirfd: $!");
  chdir($d) or fail("the sockets' folder (fd $dirfd): $!");
  close $d;
}
for my $s (qw(INT TERM HUP)) { $SIG{$s} = sub { kill $s, $child } }
# The CLI's end interrupts the wait below at once (its 0.2 s timeout would otherwise be added to
# every session's end): measured by npm run bench wall-parts.
$SIG{CHLD} = sub {};
$SIG{PIPE} = 'IGNORE';
my $report;
sub refuse {
  my ($pid) = @_;
  my $comm = '?';
  if (open(my $f, '<', "/proc/$pid/comm")) { $comm = <$f> // '?'; chomp $comm }
  $comm =~ s/[^\x21-\x7e]/?/g;
  my $line = "refused $pid $comm\n";
  if (!$report && defined $refused) { socket($report, 1, 1, 0) && connect($report, unix_addr($refused)) or undef $report }
  if (!$report || !defined syswrite($report, $line)) { undef $report; print STDERR "nightshift-bridge-refused: $line" }
}
# Each direction's buffer is read into only while below $MAX (backpressure on the writer); an EOF
# becomes a shutdown of the peer's write once the buffer is out; the pair closes when both are.
my $MAX = 262144;
my (%side, @connecting);
sub pair_close { my ($p) = @_; for (@{$p->{s}}) { next unless $_; delete $side{fileno $_}; close $_ } $p->{s} = [] }
# The supervisor's socket (its name relative to the folder chdir'ed into). A full backlog
# (EAGAIN) is tried again on the next turn; any other failure closes the accepted connection.
sub try_connect {
  my ($p) = @_;
  return 1 if connect($p->{s}[1], unix_addr($p->{path}));
  return 0 if again();
  pair_close($p); return 1;
}
sub connected {
  my ($p) = @_;
  return unless @{$p->{s}};
  $side{fileno $p->{s}[$_]} = [$p, $_] for 0, 1;
}
# Moves what direction $i (read from side $i, written to the other) can move now.
sub flow {
  my ($p, $i, $readable) = @_;
  my ($from, $to) = ($p->{s}[$i], $p->{s}[1 - $i]);
  if ($readable && !$p->{eof}[$i]) {
    my $got = sysread($from, $p->{buf}[$i], 65536, length $p->{buf}[$i]);
    if (defined $got) { $p->{eof}[$i] = 1 if $got == 0 }
    elsif (!again()) { return pair_close($p) }
  }
  if (length $p->{buf}[$i]) {
    my $w = syswrite($to, $p->{buf}[$i]);
    if (defined $w) { substr($p->{buf}[$i], 0, $w) = '' }
    elsif (!again()) { return pair_close($p) }
  }
  if ($p->{eof}[$i] && !length $p->{buf}[$i] && !$p->{shut}[$i]) { shutdown($to, 1); $p->{shut}[$i] = 1 }
  pair_close($p) if $p->{shut}[0] && $p->{shut}[1];
}
nonblocking($_) or fail("fcntl: $!") for @listen;
my $status;
while (1) {
  my $done;
  while ((my $w = waitpid(-1, 1)) > 0) { if ($w == $child) { $status = $?; $done = 1 } }
  last if $done;
  my @wait = @connecting; @connecting = ();
  for my $p (@wait) { if (try_connect($p)) { connected($p) } else { push @connecting, $p } }
  my ($rin, $win) = ('', '');
  vec($rin, fileno $_, 1) = 1 for @listen;
  for my $fd (keys %side) {
    my ($p, $i) = @{$side{$fd}};
    vec($rin, $fd, 1) = 1 if !$p->{eof}[$i] && length $p->{buf}[$i] < $MAX;
    vec($win, $fd, 1) = 1 if length $p->{buf}[1 - $i];
  }
  my $n = select(my $rout = $rin, my $wout = $win, undef, @connecting ? 0.01 : 0.2);
  next unless $n > 0;
  for my $fd (keys %side) {
    next unless $side{$fd};
    my ($p, $i) = @{$side{$fd}};
    flow($p, $i, 1) if vec($rout, $fd, 1);
    flow($p, 1 - $i, 0) if @{$p->{s}} && vec($wout, $fd, 1);
  }
  for my $l (@listen) {
    next unless vec($rout, fileno $l, 1);
    accept(my $c, $l) or next;
    if ($only{fileno $l}) {
      my $cred = getsockopt($c, 1, 17);
      my ($pid) = defined $cred ? unpack('l', $cred) : (-1);
      if ($pid != $child) { refuse($pid); close $c; next }
    }
    socket(my $u, 1, 1, 0) or do { close $c; next };
    (nonblocking($c) && nonblocking($u)) or do { close $c; close $u; next };
    my $p = { s => [$c, $u], path => $to{fileno $l}, buf => ['', ''], eof => [0, 0], shut => [0, 0] };
    if (try_connect($p)) { connected($p) } else { push @connecting, $p }
  }
}
if ($status & 127) { my $sig = $status & 127; $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP); kill $sig, $$; exit 128 + $sig }
exit $status >> 8;
`;

export type BridgeRoute = { port: number; socket: string };

// What the bridge serves: `dirFd` the descriptor (in the bridge) of the folder the supervisor's
// sockets are in, whose names the routes then give; the TCP routes; the API's socket inside the
// wall and whether only the CLI may use it (false: the test-only control); where it reports a
// refused peer.
export type BridgePlan = {
  dirFd?: number | null;
  routes: BridgeRoute[];
  api?: { path: string; socket: string; onlyCli: boolean } | null;
  refused?: string | null;
};

// Pure: the bridge's arguments before `--` and the command.
export function bridgeArgs(p: BridgePlan): string[] {
  return [
    ...(p.dirFd === undefined || p.dirFd === null ? [] : [`dir=${p.dirFd}`]),
    ...p.routes.map((r) => `${r.port}=${r.socket}`),
    ...(p.api ? [`unix${p.api.onlyCli ? '' : '-any'}:${p.api.path}=${p.api.socket}`] : []),
    ...(p.refused ? [`refused=${p.refused}`] : []),
  ];
}

// The command line that makes the bridge's peer check alone, then runs `command args`: the sandbox
// probe's (no listener: the check is what the probe needs to know).
export function peerChecked(perl: string, command: string, args: string[]): { command: string; args: string[] } {
  known(process.arch);
  const script = `use strict; sub fail { print STDERR "nightshift-bridge: $_[0]\\n"; exit 71 }\n{${PEER_CHECK}}\nexec { $ARGV[0] } @ARGV; fail("exec $ARGV[0]: $!");`;
  return { command: perl, args: ['-e', script, command, ...args] };
}

// The command line that runs `command args` behind the bridge.
export function bridged(perl: string, plan: BridgePlan, command: string, args: string[]): { command: string; args: string[] } {
  known(process.arch);
  return { command: perl, args: ['-e', SCRIPT, '--', ...bridgeArgs(plan), '--', command, ...args] };
}

// The ports the endpoints have inside the wall: the namespace is the session's own, so fixed ones
// collide with nothing. `api` is a route only in the test-only control (the CLI uses WALL_API).
export const WALL_PORTS = { api: 41001, hooks: 41002, memory: 41003, egress: 41004 } as const;
export const wallUrl = (port: number) => `http://127.0.0.1:${port}`;

// The API inside the wall: the bridge's socket and the base URL the CLI is given beside it (2.1.197
// sends its calls to the socket with this URL's host and path; port 80, which nothing in the
// session can listen on, is where a CLI that ignored the socket would fail). The socket's folder is
// a tmpfs of its own under the wall's read-only /run (sessions/wall/sandbox.ts), where the bridge
// makes it and no Bash tool may make, remove or rename a name: the shell prefix's Landlock domain
// holds those rights everywhere but there (sessions/wall/landlock.ts). In the wall's writable /tmp
// a tool renamed a listener of its own over it and answered the CLI (a forged 429 held an agent
// until 2100: e2e/wall-redteam).
export const WALL_API = { dir: '/run/nightshift', socket: '/run/nightshift/api.sock', baseUrl: 'http://localhost' } as const;

// A line the bridge writes on the `refused` socket: `refused <pid> <name>`.
export type Refusal = { pid: number; comm: string };

// Pure: the refusal a line reports, or null for anything else.
export function parseRefusal(line: string): Refusal | null {
  const m = /^refused (-?\d+) (\S+)$/.exec(line);
  return m ? { pid: Number(m[1]), comm: m[2] } : null;
}
