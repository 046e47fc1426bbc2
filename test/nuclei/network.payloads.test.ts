/** Payload attacks on network blocks: one connection per combination, stop-at-first-match, the connection cap. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/scanner/nuclei/index.js';
import { run, startTcpService, tcpTemplate, type TcpService } from './network-servers.js';

const HOST = '127.0.0.1';
let ftp: TcpService;

beforeAll(async () => {
  // accepts admin / toor only (no banner: each read gets the answer to the command before it)
  ftp = await startTcpService((socket) => {
    let user = '';
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line.startsWith('USER ')) {
          user = line.slice(5);
          socket.write('331 Password required\r\n');
        } else if (line.startsWith('PASS ')) {
          socket.write(user === 'admin' && line.slice(5) === 'toor' ? '230 Login successful\r\n' : '530 Login incorrect\r\n');
        }
      }
    });
  });
});

afterAll(async () => {
  await ftp?.close();
});

const weakCredentials = (extra = '') =>
  tcpTemplate(
    `  - inputs:
      - data: "USER {{username}}\\r\\n"
        read: 64
      - data: "PASS {{password}}\\r\\n"
    host:
      - "{{Hostname}}"
    port: ${ftp.port}
    attack: clusterbomb
    payloads:
      username: [root, admin]
      password: [guest, toor, nas]
${extra}    matchers:
      - type: word
        words: ["230 Login successful"]
`,
    'ftp-weak',
  );

describe('network payloads', () => {
  it('connect once per combination and find the pair that works', async () => {
    const before = ftp.connections;
    const out = await run(weakCredentials(), { host: HOST });
    expect(ftp.connections - before).toBe(6);
    expect(out.results).toHaveLength(1);
    expect(out.results[0]!.request).toContain('USER admin');
    expect(out.results[0]!.request).toContain('PASS toor');
  });

  it('stop at the first match', async () => {
    const before = ftp.connections;
    const out = await run(weakCredentials('    stop-at-first-match: true\n'), { host: HOST });
    // root/guest, admin/guest, root/toor, admin/toor
    expect(ftp.connections - before).toBe(4);
    expect(out.results).toHaveLength(1);
  });

  it('stop at the connection cap, with a warning and no finding they did not see', async () => {
    const before = ftp.connections;
    const out = await run(weakCredentials(), { host: HOST }, { maxConnectionsPerTemplate: 3 });
    expect(ftp.connections - before).toBe(3);
    expect(out.results).toEqual([]);
    expect(out.warnings.map((w) => w.message).join('\n')).toContain('connection limit of 3 per template reached');
  });

  it('read a payload file only through the reader', () => {
    const yaml = tcpTemplate(
      '  - inputs:\n      - data: "USER {{u}}\\r\\n"\n    host: ["{{Hostname}}"]\n    port: 21\n    payloads:\n      u: helpers/users.txt\n    matchers:\n      - type: word\n        words: ["230"]\n',
    );
    expect(parseTemplate(yaml).errors[0]!.message).toContain('can only be read from the template library');
    const read = parseTemplate(yaml, { readPayloadFile: (ref) => (ref === 'helpers/users.txt' ? 'root\nadmin\n' : undefined) });
    expect(read.template!.network![0]!.payloads!.sets[0]!.values).toEqual(['root', 'admin']);
    expect(read.template!.payloadFiles).toEqual(['helpers/users.txt']);
  });
});
