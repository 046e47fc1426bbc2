import { describe, expect, it } from 'vitest';
import { evaluateExpression, scopeOf, type DslRecord } from '../../src/scanner/nuclei/index.js';

const ev = (expr: string, vars: DslRecord = {}) => evaluateExpression(expr, scopeOf(vars));

describe('ip_format(ip, index)', () => {
  it("gives mapcidr's notations of an IPv4 address (the first one for index 4)", () => {
    const forms = Array.from({ length: 10 }, (_, i) => ev(`ip_format('127.0.0.1', ${i + 1})`));
    expect(forms).toEqual([
      '127.0.0.1',
      '127.1',
      '0177.0.0.01',
      '0x7f.0x0.0x0.0x1',
      '2130706433',
      '1111111000000000000000000000001',
      '0x7f.0.0.0x1',
      '::ffff:7f00:0001',
      '%31%32%37%2E%30%2E%30%2E%31',
      '127.000.000.001',
    ]);
    expect(ev("ip_format('127.0.1.0', '11')")).toBe('127.0.256');
    expect(ev("ip_format('192.168.1.10', 3)")).toBe('0300.0250.01.012');
    expect(ev("ipformat('10.0.0.1', 2)")).toBe('11'); // mapcidr's regex drops every "0." run
  });

  it('formats IPv6 addresses with the same rules', () => {
    expect(ev("ip_format('2001:DB8:0:0:1:0:0:1', 1)")).toBe('2001:db8::1:0:0:1');
    expect(ev("ip_format('::1', 5)")).toBe('1');
    expect(ev("ip_format('::1', 8)")).toBe('::1');
    expect(ev("ip_format('::1.2.3.4', 1)")).toBe('::102:304');
    expect(ev("ip_format('::ffff:1.2.3.4', 1)")).toBe('1.2.3.4');
    expect(ev("ip_format('::1', 9)")).toBe('%3A%3A%31');
  });

  it('rejects bad addresses and indexes', () => {
    expect(() => ev("ip_format('localhost', 1)")).toThrow("'localhost' is not an IP address");
    expect(() => ev("ip_format('127.0.0.1', 0)")).toThrow('format must be in range 1-11');
    expect(() => ev("ip_format('127.0.0.1', 12)")).toThrow('format must be in range 1-11');
    expect(() => ev("ip_format('127.0.0.1', 'x')")).toThrow('invalid syntax');
    expect(() => ev("ip_format('127.0.0.1', '01')")).toThrow('no formatted IP returned');
    expect(() => ev("ip_format('127.0.0.1', 11)")).toThrow('no formatted IP returned');
    expect(() => ev("ip_format('::1', 10)")).toThrow('needs an IPv4 address');
    expect(() => ev("ip_format('127.0.0.1')")).toThrow('invalid number of arguments');
  });
});

describe('rand_ip(cidr, ...)', () => {
  it('returns addresses of the CIDR, never its network address', () => {
    for (let i = 0; i < 50; i++) {
      const ip = ev("rand_ip('1.1.1.0/24')") as string;
      expect(ip).toMatch(/^1\.1\.1\.([0-9]+)$/);
      expect(ip).not.toBe('1.1.1.0');
      expect(Number(ip.split('.')[3])).toBeLessThan(256);
    }
    expect(ev("rand_ip('10.0.0.0/31')")).toBe('10.0.0.1');
    expect(ev("rand_ip('10.0.0.5/32')")).toBe('10.0.0.5');
    expect(['::1', '::2', '::3']).toContain(ev("rand_ip('::/126')"));
    expect(ev("rand_ip('2001:db8::/64')")).toMatch(/^2001:db8:/);
  });

  it('picks one of several CIDRs', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) seen.add(ev("rand_ip('10.0.0.0/31', '10.0.1.0/31')") as string);
    expect([...seen].sort()).toEqual(['10.0.0.1', '10.0.1.1']);
  });

  it('rejects what is not a CIDR', () => {
    expect(() => ev("rand_ip('1.2.3.4')")).toThrow('1.2.3.4 is not a valid cidr');
    expect(() => ev("rand_ip('1.2.3.4/33')")).toThrow('is not a valid cidr');
    expect(() => ev("rand_ip('host/24')")).toThrow('is not a valid cidr');
    expect(() => ev('rand_ip(24)')).toThrow('the CIDR must be a string');
    expect(() => ev('rand_ip()')).toThrow('invalid number of arguments');
  });
});
