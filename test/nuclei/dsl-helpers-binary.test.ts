import yauzl from 'yauzl';
import { describe, expect, it } from 'vitest';
import { encodeString, evaluateExpression, scopeOf, type DslRecord } from '../../src/scanner/nuclei/index.js';

const ev = (expr: string, vars: DslRecord = {}) => evaluateExpression(expr, scopeOf(vars));

interface Entry {
  name: string;
  method: number;
  modified: Date;
  content: string;
  bytes: Buffer;
}

/** Reads an archive with yauzl, an independent ZIP reader. */
function readZip(data: Buffer): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const entries: Entry[] = [];
      zip.on('entry', (e: yauzl.Entry) => {
        zip.openReadStream(e, (streamErr, stream) => {
          if (streamErr) return reject(streamErr);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            entries.push({
              name: e.fileName,
              method: e.compressionMethod,
              modified: e.getLastModDate(),
              content: Buffer.concat(chunks).toString(),
              bytes: Buffer.concat(chunks),
            });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('zip(name, content, ...)', () => {
  it('builds a deflated archive with the entries in order, repeated names kept', async () => {
    const data = encodeString(ev("zip('plugin/phpinfo.php', '<?php echo 1; ?>', 'b.txt', repeat('ab', 500), 'b.txt', '')") as string);
    const entries = await readZip(data);
    expect(entries.map((e) => [e.name, e.content])).toEqual([
      ['plugin/phpinfo.php', '<?php echo 1; ?>'],
      ['b.txt', 'ab'.repeat(500)],
      ['b.txt', ''],
    ]);
    expect(entries.every((e) => e.method === 8)).toBe(true);
    expect(entries[0].modified.getFullYear()).toBe(1980);
  });

  it('keeps binary content byte for byte', async () => {
    const data = encodeString(ev("zip('x.bin', hex_decode('00ff10fe'))") as string);
    const [entry] = await readZip(data);
    expect([...entry.bytes]).toEqual([0x00, 0xff, 0x10, 0xfe]);
  });

  it('needs name/content pairs of strings', () => {
    expect(() => ev("zip('a', 'b', 'c')")).toThrow('requires pairs of file entry and content');
    expect(() => ev("zip(1, 'b')")).toThrow('file entry must be a string');
    expect(() => ev("zip('a', 2)")).toThrow('content must be a string');
    expect(() => ev("zip('a')")).toThrow('invalid number of arguments');
  });
});

describe('unpack(format, data)', () => {
  it('reads the first value, little-endian unless told otherwise', () => {
    expect(ev("unpack('>I', hex_decode('0000beef'))")).toBe(0xbeef);
    expect(ev("unpack('I', hex_decode('efbe0000'))")).toBe(0xbeef);
    expect(ev("unpack('>I', substr(challenge, 9, 13))", { challenge: `\x00\x00\x00\x00\x00\x00\x00\x00\x00${'\x12\x34\x56\x78'}` })).toBe(0x12345678);
    expect(ev("unpack('<h', hex_decode('feff'))")).toBe(-2);
    expect(ev("unpack('>H', hex_decode('ffff'))")).toBe(-1); // gostruct reads the upper-case codes signed too
    expect(ev("unpack('b', hex_decode('ff'))")).toBe(-1);
    expect(ev("unpack('B', hex_decode('ff'))")).toBe(255);
    expect(ev("unpack('?', hex_decode('01'))")).toBe(true);
    expect(ev("unpack('>q', hex_decode('0000000100000000'))")).toBe(4294967296);
    expect(ev("unpack('f', hex_decode('cdcc8c3f'))")).toBe(1.1);
    expect(ev("unpack('>d', hex_decode('3ff8000000000000'))")).toBe(1.5);
    expect(ev("unpack('>II', hex_decode('0000000100000002'))")).toBe(1);
    expect(ev("unpack('s', 'abc')")).toBe('');
  });

  it('reports unknown tokens, short data, empty formats and non-string arguments', () => {
    expect(() => ev("unpack('4s', 'abcd')")).toThrow("Unexpected format token: '4'");
    expect(() => ev("unpack('x', 'a')")).toThrow("Unexpected format token: 'x'");
    expect(() => ev("unpack('>Q', 'ab')")).toThrow('expected size is bigger than actual size of message');
    expect(() => ev("unpack('>', 'ab')")).toThrow('no result');
    expect(() => ev("unpack(1, 'ab')")).toThrow('invalid format');
    expect(() => ev("unpack('b', 1)")).toThrow('invalid data');
    expect(() => ev("unpack('b')")).toThrow('invalid number of arguments');
  });
});
