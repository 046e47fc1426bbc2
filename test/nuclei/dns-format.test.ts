/** DNS records and messages in miekg/dns's text form (what nuclei's dns templates match on). */
import { describe, expect, it } from 'vitest';
import { messageString, recordsKeyValue, recordsString, recordString } from '../../src/scanner/nuclei/engine/dns-format.js';

describe('miekg text forms', () => {
  it('prints each record type as miekg does', () => {
    const r = (type: string, data: unknown) => recordString({ name: 'example.test', type, class: 'IN', ttl: 300, data });
    expect(r('A', '192.0.2.1')).toBe('example.test.\t300\tIN\tA\t192.0.2.1');
    expect(r('AAAA', '2001:0db8:0000:0000:0000:0000:0000:0001')).toBe('example.test.\t300\tIN\tAAAA\t2001:db8::1');
    expect(r('CNAME', 'target.example.net')).toBe('example.test.\t300\tIN\tCNAME\ttarget.example.net.');
    expect(r('MX', { preference: 10, exchange: 'mx.example.test' })).toBe('example.test.\t300\tIN\tMX\t10 mx.example.test.');
    expect(r('TXT', [Buffer.from('v=spf1 -all'), Buffer.from('say "hi"\\\u0001é')])).toBe(
      'example.test.\t300\tIN\tTXT\t"v=spf1 -all" "say \\"hi\\"\\\\\\001\\195\\169"',
    );
    expect(r('SOA', { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 })).toBe(
      'example.test.\t300\tIN\tSOA\tns1.example.test. hostmaster.example.test. 1 2 3 4 5',
    );
    expect(r('SRV', { priority: 1, weight: 2, port: 443, target: 'svc.example.test' })).toBe('example.test.\t300\tIN\tSRV\t1 2 443 svc.example.test.');
    expect(r('CAA', { flags: 0, tag: 'issue', value: Buffer.from('letsencrypt.org') })).toBe('example.test.\t300\tIN\tCAA\t0 issue "letsencrypt.org"');
    expect(r('DS', { keyTag: 2371, algorithm: 13, digestType: 2, digest: Buffer.from('ab01', 'hex') })).toBe('example.test.\t300\tIN\tDS\t2371 13 2 AB01');
  });

  it('concatenates a section without separators and keys answers by type (lists for repeats)', () => {
    const answers = [
      { name: 'www.example.test', type: 'CNAME', class: 'IN', ttl: 60, data: 'example.test' },
      { name: 'example.test', type: 'A', class: 'IN', ttl: 60, data: '192.0.2.1' },
      { name: 'example.test', type: 'A', class: 'IN', ttl: 60, data: '192.0.2.2' },
    ];
    expect(recordsString(answers)).toBe(
      'www.example.test.\t60\tIN\tCNAME\texample.test.example.test.\t60\tIN\tA\t192.0.2.1example.test.\t60\tIN\tA\t192.0.2.2',
    );
    expect({ ...recordsKeyValue(answers) }).toEqual({ cname: 'example.test', a: ['192.0.2.1', '192.0.2.2'] });
  });

  it('prints a whole message like dig / miekg Msg.String()', () => {
    const text = messageString({
      id: 4660,
      type: 'response',
      flags: 0x0100 | 0x0080 | 0x0400,
      rcode: 'NXDOMAIN',
      questions: [{ name: 'gone.example.test', type: 'A', class: 'IN' }],
      answers: [],
      authorities: [
        {
          name: 'example.test',
          type: 'SOA',
          class: 'IN',
          ttl: 60,
          data: { mname: 'ns1.example.test', rname: 'h.example.test', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 },
        },
      ],
      additionals: [{ name: '.', type: 'OPT', udpPayloadSize: 4096, flags: 0 }],
    });
    expect(text).toBe(
      ';; opcode: QUERY, status: NXDOMAIN, id: 4660\n' +
        ';; flags: qr aa rd ra; QUERY: 1, ANSWER: 0, AUTHORITY: 1, ADDITIONAL: 1\n' +
        '\n;; OPT PSEUDOSECTION:\n; EDNS: version 0; flags:; udp: 4096\n' +
        '\n;; QUESTION SECTION:\n;gone.example.test.\tIN\t A\n' +
        '\n;; AUTHORITY SECTION:\nexample.test.\t60\tIN\tSOA\tns1.example.test. h.example.test. 1 2 3 4 5\n',
    );
  });
});
