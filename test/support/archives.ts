import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { Header } from 'tar';

/**
 * Archives built byte by byte, so tests can hold what no careful archiver writes: `../x.yaml`, `/etc/x.yaml`,
 * symbolic links, devices. Tar headers come from node-tar's Header (ustar + checksum); zips are written here.
 */

export interface ArchiveItem {
  path: string;
  content?: string | Buffer;
  /** Default file; directories need no content. */
  type?: 'file' | 'directory' | 'symlink' | 'hardlink' | 'device';
  linkpath?: string;
}

const TAR_TYPES = { file: 'File', directory: 'Directory', symlink: 'SymbolicLink', hardlink: 'Link', device: 'CharacterDevice' } as const;

export function tarGz(items: ArchiveItem[]): Buffer {
  const blocks: Buffer[] = [];
  for (const item of items) {
    const type = item.type ?? 'file';
    const data = type === 'file' ? Buffer.from(item.content ?? '') : Buffer.alloc(0);
    const header = new Header({
      path: item.path,
      mode: type === 'directory' ? 0o755 : 0o644,
      size: data.length,
      type: TAR_TYPES[type],
      mtime: new Date('2026-01-01T00:00:00Z'),
      ...(item.linkpath ? { linkpath: item.linkpath } : {}),
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

const UNIX_MODE = { file: 0o100644, directory: 0o040755, symlink: 0o120777, hardlink: 0o100644, device: 0o020644 } as const;

/** A zip with Unix modes in the external attributes (how Info-ZIP and git write them); deflated unless `stored`. */
export function zip(items: ArchiveItem[], options: { stored?: boolean } = {}): Buffer {
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const item of items) {
    const type = item.type ?? 'file';
    const name = Buffer.from(type === 'directory' && !item.path.endsWith('/') ? `${item.path}/` : item.path, 'utf8');
    const data = type === 'symlink' ? Buffer.from(item.linkpath ?? '') : Buffer.from(item.content ?? '');
    const method = options.stored || data.length === 0 ? 0 : 8;
    const packed = method === 8 ? deflateRawSync(data) : data;
    const crc = crc32(data);
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(0x800, 6); // UTF-8 names
    head.writeUInt16LE(method, 8);
    head.writeUInt32LE(crc, 14);
    head.writeUInt32LE(packed.length, 18);
    head.writeUInt32LE(data.length, 22);
    head.writeUInt16LE(name.length, 26);
    local.push(head, name, packed);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE((3 << 8) | 20, 4); // made on Unix: the mode is in the high half of the external attributes
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(0x800, 8);
    entry.writeUInt16LE(method, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(packed.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE((UNIX_MODE[type] << 16) >>> 0, 38);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, name);
    offset += head.length + name.length + packed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(items.length, 8);
  end.writeUInt16LE(items.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, directory, end]);
}
