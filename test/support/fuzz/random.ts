/**
 * A seeded source of values for the fuzz tests: the same seed gives the same cases, so a failure can be
 * replayed. Values lean on what has broken servers before: NUL and control characters, deep nesting,
 * prototype keys, huge numbers, wrong types, ids of every shape.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32: small, fast, good enough for choosing cases. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

function deeplyNested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

/** Strings that are not what anyone meant to send. */
export function nastyString(random: Random): string {
  return random.pick([
    '',
    ' ',
    'a\u0000b',
    '\u0000',
    'x'.repeat(10_000),
    '../../etc/passwd',
    '%00',
    '%ZZ',
    '<script>alert(1)</script>',
    'javascript:alert(1)',
    '__proto__',
    'constructor',
    '\ud800',
    '😀'.repeat(50),
    "' OR 1=1 --",
    '${jndi:ldap://127.0.0.1/a}',
    '\r\nX-Injected: 1',
    'null',
    '-1',
    '1e309',
    'not-a-uuid',
    'V29ya3NwYWNlOm5vdC1hLXV1aWQ=',
    'http://127.0.0.1:1/',
    '*.',
    '0.0.0.0/0',
  ]);
}

/** Any JSON value of the wrong kind, including ones that are hard to parse or walk. */
export function nastyValue(random: Random): unknown {
  switch (random.int(0, 11)) {
    case 0:
      return null;
    case 1:
      return random.pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER]);
    case 2:
      return random.pick([true, false]);
    case 3:
      return [];
    case 4:
      return {};
    case 5:
      return deeplyNested(random.pick([50, 200, 1_000]));
    case 6:
      return JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}');
    case 7:
      return Array.from({ length: random.pick([2, 1_000]) }, () => nastyString(random));
    default:
      return nastyString(random);
  }
}

/** A string of the format a schema asks for, valid most of the time. Addresses stay on loopback. */
export function stringFor(random: Random, format: string | undefined, pattern: string | undefined, enumValues?: unknown[]): string {
  if (enumValues?.length) return String(random.pick(enumValues));
  switch (format) {
    case 'uuid':
      return random.uuid();
    case 'uri':
    case 'url':
      return random.pick(['http://127.0.0.1:1/', 'https://127.0.0.1:9/x', 'http://[::1]:1/']);
    case 'email':
      return `fuzz${random.int(0, 1e6)}@example.test`;
    case 'date-time':
      return new Date(1_700_000_000_000 + random.int(0, 1e9)).toISOString();
    default:
      if (pattern) return random.pick(['a', 'abc', '127.0.0.1', 'x-y_z', 'A1']);
      return random.pick(['fuzz', 'example.test', '127.0.0.1', '127.0.0.0/30', 'http://127.0.0.1:1/a', 'a b c', 'Ünïcödé', 'x']);
  }
}
