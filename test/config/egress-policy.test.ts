import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addressRefusal, embeddedV4, hostAllowed, networkEntryProblem, sameAddress, type NetworkPolicy } from '../../config/egress-policy.js';

describe('which hosts a policy names', () => {
  const list: NetworkPolicy = ['example.test', '*.wiki.test', '203.0.113.7', '2606:4700::1111'];
  const table: Array<[NetworkPolicy, string, boolean]> = [
    ['none', 'example.test', false],
    ['none', '93.184.216.34', false],
    ['open', 'anything.example', true],
    ['open', '93.184.216.34', true],
    [list, 'example.test', true],
    [list, 'EXAMPLE.test.', true],
    [list, 'www.example.test', false],
    [list, 'example.test.evil', false],
    [list, 'notexample.test', false],
    [list, 'en.wiki.test', true],
    [list, 'a.b.wiki.test', true],
    [list, 'wiki.test', false],
    [list, 'xwiki.test', false],
    [list, '203.0.113.7', true],
    [list, '::ffff:203.0.113.7', true],
    [list, '203.0.113.8', false],
    [list, '[2606:4700:0::1111]', true],
    [list, '2606:4700::1112', false],
    [['*.wiki.test'], '1.2.3.4', false],
    [list, '', false],
  ];
  for (const [policy, host, allowed] of table) {
    test(`${JSON.stringify(policy)} ${allowed ? 'allows' : 'refuses'} ${JSON.stringify(host)}`, () => assert.equal(hostAllowed(policy, host), allowed));
  }
});

describe('which entries a network: list may hold', () => {
  const table: Array<[string, boolean]> = [
    ['example.com', true], ['*.example.com', true], ['xn--bcher-kva.example', true], ['10.0.0.1', true], ['::1', true],
    ['*.com', false], ['*', false], ['exa mple.com', false], ['http://example.com', false], ['example.com:443', false], ['-bad.example', false], ['a.*.example', false], ['', false],
  ];
  for (const [entry, good] of table) test(`${JSON.stringify(entry)} is ${good ? '' : 'not '}an entry`, () => assert.equal(networkEntryProblem(entry) === null, good));
});

describe('which addresses the proxy never connects to', () => {
  const refused: Array<[string, RegExp]> = [
    ['127.0.0.1', /loopback/], ['127.255.255.254', /loopback/], ['::1', /loopback/],
    ['169.254.169.254', /link-local/], ['fe80::1', /link-local/], ['fe80::1%eth0', /link-local/], ['febf::1', /link-local/],
    ['10.0.0.1', /private/], ['172.16.0.1', /private/], ['172.31.255.255', /private/], ['192.168.1.1', /private/],
    ['fc00::1', /unique-local/], ['fd12:3456::1', /unique-local/],
    ['100.64.0.1', /CGNAT/], ['100.127.255.255', /CGNAT/],
    ['0.0.0.0', /this network/], ['0.1.2.3', /this network/], ['::', /unspecified/],
    ['224.0.0.1', /multicast/], ['239.255.255.250', /multicast/], ['ff02::1', /multicast/],
    ['255.255.255.255', /reserved/], ['240.0.0.1', /reserved/],
    // IPv4 inside IPv6: mapped, in both spellings, compatible, translated and NAT64.
    ['::ffff:127.0.0.1', /loopback.*inside an IPv6/], ['::ffff:7f00:1', /loopback/], ['0:0:0:0:0:ffff:a9fe:a9fe', /link-local/],
    ['::ffff:10.0.0.1', /private/], ['::ffff:192.168.0.1', /private/], ['::ffff:100.64.0.1', /CGNAT/], ['::127.0.0.1', /loopback/],
    ['::ffff:0:169.254.169.254', /link-local/], ['64:ff9b::10.0.0.1', /private/], ['64:ff9b::a9fe:a9fe', /link-local/],
    ['2002:7f00:1::', /6to4/], ['2001:0:4136:e378::1', /Teredo/], ['4000::1', /global unicast/],
    ['not-an-ip', /not an IP/], ['example.test', /not an IP/],
  ];
  for (const [address, why] of refused) test(`refuses ${address}`, () => assert.match(String(addressRefusal(address)), why));

  const own = ['198.51.100.20', '2a01:4f8::20', 'fe80::1234'];
  for (const address of ['198.51.100.20', '::ffff:198.51.100.20', '2a01:4f8:0:0::20'])
    test(`refuses the host's own ${address}`, () => assert.equal(addressRefusal(address, own), "the host's own address"));

  const allowed = ['93.184.216.34', '1.1.1.1', '8.8.8.8', '172.32.0.1', '172.15.255.255', '100.63.255.255', '100.128.0.1', '169.253.0.1', '11.0.0.1', '198.51.100.21', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:93.184.216.34', '64:ff9b::808:808'];
  for (const address of allowed) test(`allows the public ${address}`, () => assert.equal(addressRefusal(address, own), null));

  test('an embedded IPv4 address is read out, and spellings of one address are the same', () => {
    assert.equal(embeddedV4('::ffff:7f00:1'), '127.0.0.1');
    assert.equal(embeddedV4('2606:4700::1111'), null);
    assert.ok(sameAddress('::ffff:1.2.3.4', '1.2.3.4'));
    assert.ok(sameAddress('2001:DB8::1', '2001:db8:0:0:0:0:0:1'));
    assert.ok(!sameAddress('1.2.3.4', '1.2.3.5'));
  });
});
