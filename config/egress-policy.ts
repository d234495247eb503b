// What the egress proxy decides, as pure functions over plain data: whether a host name is one the
// policy names (`network:` of the agent or the site), and whether an address may be connected to at
// all. An address is refused, whatever name resolved to it, when it is not a public unicast one
// (loopback, link-local, private, unique-local, CGNAT, this-network, multicast, reserved, and the
// IPv6 forms that carry one of these IPv4 addresses inside) or is one of the host's own.
import net from 'node:net';

// `none`: no proxy at all (the default); `open`: any public host; else the names listed, exact or
// `*.example.com` (any name below example.com, not example.com itself), or IP literals.
export type NetworkPolicy = 'none' | 'open' | string[];

// Pure: the name as the policy compares it (lower case, no trailing dot, no IPv6 brackets).
export function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

// Pure: why a `network:` entry is not one, or null. Used by the config and the agents' schema.
export function networkEntryProblem(entry: string): string | null {
  const e = normalizeHost(entry);
  if (net.isIP(e)) return null;
  const wild = e.startsWith('*.');
  const labels = (wild ? e.slice(2) : e).split('.');
  if (!labels.every((l) => LABEL.test(l))) return 'Expected a host name like `example.com`, `*.example.com` or an IP address';
  if (wild && labels.length < 2) return 'Expected a wildcard below a domain, like `*.example.com`, not a whole top-level domain';
  return null;
}

// Pure: whether the policy lets the session ask for `host` (before anything is resolved). An IP
// literal passes only under `open` or when it is listed itself; a wildcard never matches one.
export function hostAllowed(policy: NetworkPolicy, host: string): boolean {
  if (policy === 'none') return false;
  const h = normalizeHost(host);
  if (!h) return false;
  if (policy === 'open') return true;
  const literal = net.isIP(h) !== 0;
  return policy.some((entry) => {
    const e = normalizeHost(entry);
    if (literal) return net.isIP(e) !== 0 && sameAddress(e, h);
    if (e.startsWith('*.')) return h.endsWith(e.slice(1)) && h.length > e.length - 1;
    return e === h;
  });
}

// An address as a number and its family: IPv4 as 32 bits, IPv6 as 128.
type Parsed = { v: 4; n: number } | { v: 6; n: bigint };

function parseV4(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const b = m.slice(1).map(Number);
  if (b.some((x) => x > 255)) return null;
  return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
}

function parseV6(s: string): bigint | null {
  let t = s.replace(/%.*$/, '');
  // A dotted IPv4 tail (::ffff:127.0.0.1) becomes two groups.
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(t);
  if (tail) {
    const v4 = parseV4(tail[1]);
    if (v4 === null) return null;
    t = `${t.slice(0, -tail[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = t.split('::');
  if (halves.length > 2) return null;
  const groups = (x: string) => (x ? x.split(':') : []);
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return null;
  const all = [...head, ...Array(fill).fill('0'), ...rest];
  if (all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  return all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function parse(address: string): Parsed | null {
  const a = normalizeHost(address);
  if (net.isIPv4(a)) {
    const n = parseV4(a);
    return n === null ? null : { v: 4, n };
  }
  if (net.isIPv6(a.replace(/%.*$/, ''))) {
    const n = parseV6(a);
    return n === null ? null : { v: 6, n };
  }
  return null;
}

const V4_RANGES: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this network (0.0.0.0/8)'],
  ['10.0.0.0', 8, 'private (10/8)'],
  ['100.64.0.0', 10, 'shared address space, CGNAT (100.64/10)'],
  ['127.0.0.0', 8, 'loopback (127/8)'],
  ['169.254.0.0', 16, 'link-local (169.254/16)'],
  ['172.16.0.0', 12, 'private (172.16/12)'],
  ['192.0.0.0', 24, 'IETF protocol assignments (192.0.0/24)'],
  ['192.168.0.0', 16, 'private (192.168/16)'],
  ['198.18.0.0', 15, 'benchmarking (198.18/15)'],
  ['224.0.0.0', 4, 'multicast (224/4)'],
  ['240.0.0.0', 4, 'reserved (240/4, broadcast)'],
];

const V6_RANGES: Array<[string, number, string]> = [
  ['::', 128, 'unspecified (::)'],
  ['::1', 128, 'loopback (::1)'],
  ['fe80::', 10, 'link-local (fe80::/10)'],
  ['fc00::', 7, 'unique-local (fc00::/7)'],
  ['fec0::', 10, 'site-local (fec0::/10)'],
  ['ff00::', 8, 'multicast (ff00::/8)'],
  ['100::', 64, 'discard (100::/64)'],
  // Tunnels that carry an IPv4 address elsewhere in the address: refused whole.
  ['2002::', 16, '6to4 (2002::/16)'],
  ['2001::', 32, 'Teredo (2001::/32)'],
];

// IPv6 forms whose low 32 bits are an IPv4 address that is checked as such: mapped (::ffff:0:0/96),
// translated (::ffff:0:0:0/96), compatible (::/96) and NAT64 (64:ff9b::/96, 64:ff9b:1::/48).
const V6_EMBEDDING: Array<[string, number]> = [['::ffff:0:0', 96], ['::ffff:0:0:0', 96], ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48]];

const inV4 = (n: number, base: string, bits: number) => bits === 0 || (n >>> (32 - bits)) === (parseV4(base)! >>> (32 - bits));
const inV6 = (n: bigint, base: string, bits: number) => n >> BigInt(128 - bits) === parseV6(base)! >> BigInt(128 - bits);

const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

// Pure: the IPv4 address an IPv6 one carries (mapped, compatible, NAT64), else null.
export function embeddedV4(address: string): string | null {
  const p = parse(address);
  if (!p || p.v !== 6) return null;
  for (const [base, bits] of V6_EMBEDDING) if (inV6(p.n, base, bits)) return v4Text(Number(p.n & 0xffffffffn));
  return null;
}

// Pure: whether two textual addresses are the same address (`::ffff:1.2.3.4` is `1.2.3.4`).
export function sameAddress(a: string, b: string): boolean {
  const key = (x: string) => {
    const v4 = embeddedV4(x);
    const p = parse(v4 ?? x);
    return p ? `${p.v}:${p.n.toString(16)}` : normalizeHost(x);
  };
  return key(a) === key(b);
}

// Pure: why the proxy may not connect to `address`, or null for a public unicast address that is
// none of the host's own (`own`: every address of the host's interfaces).
export function addressRefusal(address: string, own: readonly string[] = []): string | null {
  const p = parse(address);
  if (!p) return 'not an IP address';
  const why = rangeRefusal(address, p);
  if (why) return why;
  return own.some((o) => sameAddress(o, address)) ? "the host's own address" : null;
}

// The range an address falls in that is never connected to, or null for public unicast.
function rangeRefusal(address: string, p: Parsed): string | null {
  if (p.v === 4) {
    for (const [base, bits, why] of V4_RANGES) if (inV4(p.n, base, bits)) return why;
    return null;
  }
  const inner = embeddedV4(address);
  // ::/96 holds :: and ::1, named as such below; any other embedding is judged by its IPv4 address.
  if (inner !== null && !(inV6(p.n, '::', 96) && p.n <= 1n)) {
    const why = rangeRefusal(inner, parse(inner)!);
    return why ? `${why}, inside an IPv6 address` : null;
  }
  for (const [base, bits, why] of V6_RANGES) if (inV6(p.n, base, bits)) return why;
  if (!inV6(p.n, '2000::', 3)) return 'not global unicast IPv6 (2000::/3)';
  return null;
}
