import { describe, expect, test } from 'bun:test'
import { clientOf } from '../../src/users/throttle.ts'

describe('the client a throttle counts', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
    ['2001:db8:a:b::1', '2001:db8:a:b::/64'],
    ['2001:0db8:000a:000b:1:2:3:4', '2001:db8:a:b::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    // IPv4 carried in IPv6 (NAT64, IPv4-compatible, SIIT): by its IPv4 address
    ['64:ff9b::198.51.100.1', '198.51.100.1'],
    ['::198.51.100.1', '198.51.100.1'],
    ['::ffff:0:198.51.100.1', '198.51.100.1'],
    // what a proxy may add: a port, brackets
    ['203.0.113.7:5678', '203.0.113.7'],
    ['[2001:db8:a:b::1]:443', '2001:db8:a:b::/64'],
    ['[2001:db8:a:b::1]', '2001:db8:a:b::/64'],
    // not an address: itself, never merged with others
    ['unknown', 'unknown'],
    ['2001:db8::1::2', '2001:db8::1::2'],
    ['2001:db8:zz::1', '2001:db8:zz::1'],
  ])('%s counts as %s', (address, client) => {
    expect(clientOf(address)).toBe(client)
  })

  test('addresses of one /64 are one client, of two /64s two', () => {
    expect(clientOf('2001:db8:a:b::1')).toBe(clientOf('2001:db8:a:b:ffff:ffff:ffff:ffff'))
    expect(clientOf('2001:db8:a:b::1')).not.toBe(clientOf('2001:db8:a:c::1'))
  })
})
