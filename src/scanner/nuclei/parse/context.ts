/** What every parse stage shares: the error/warning collector with YAML positions, path segments, type checks. */
import { isMap, isScalar, isSeq, type LineCounter, type Node as YamlNode } from 'yaml';
import type { Condition, TemplateIssue } from '../types.js';

export type Seg = string | number;

export function pathString(segs: Seg[]): string {
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out ? `.${s}` : s;
  }
  return out;
}

export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'list';
  return typeof v === 'object' ? 'mapping' : typeof v;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function isHex(s: string): boolean {
  return s.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(s);
}

export class Ctx {
  readonly errors: TemplateIssue[] = [];
  readonly warnings: TemplateIssue[] = [];

  constructor(
    private readonly root: YamlNode | null,
    private readonly lines: LineCounter,
  ) {}

  private locate(segs: Seg[], atKey: boolean): { line?: number; column?: number } {
    let node: unknown = this.root;
    let best: unknown = this.root;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i];
      const last = i === segs.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        node = last && atKey ? pair.key : (pair.value ?? pair.key);
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
      } else break;
      if (node) best = node;
      else break;
    }
    const range = (best as { range?: [number, number, number] } | null)?.range;
    if (!range) return {};
    const pos = this.lines.linePos(range[0]);
    return { line: pos.line, column: pos.col };
  }

  error(message: string, segs: Seg[], atKey = false) {
    this.errors.push({ message, path: pathString(segs), ...this.locate(segs, atKey) });
  }

  warn(message: string, segs: Seg[], atKey = false) {
    this.warnings.push({ message, path: pathString(segs), ...this.locate(segs, atKey) });
  }

  /**
   * The text of a plain scalar as written, for fields Go reads as strings: YAML 1.2 would turn `000020` into 20
   * and `0x1F` into 31, Go's yaml keeps the text. Undefined when the node is not a scalar.
   */
  scalarSource(segs: Seg[]): string | undefined {
    let node: unknown = this.root;
    for (const seg of segs) {
      if (isMap(node)) node = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg))?.value;
      else if (isSeq(node) && typeof seg === 'number') node = node.items[seg];
      else return undefined;
    }
    return isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  }

  /* ---- typed readers ------------------------------------------------------------------------------------- */

  str(obj: Record<string, unknown>, key: string, segs: Seg[]): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    this.error(`'${key}' must be a string, got ${typeName(v)}`, [...segs, key]);
    return undefined;
  }

  bool(obj: Record<string, unknown>, key: string, segs: Seg[]): boolean | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    this.error(`'${key}' must be a boolean, got ${typeName(v)}`, [...segs, key]);
    return undefined;
  }

  int(obj: Record<string, unknown>, key: string, segs: Seg[], min = 0): number | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
    if (typeof n === 'number' && Number.isInteger(n) && n >= min) return n;
    this.error(`'${key}' must be an integer >= ${min}, got ${JSON.stringify(v)}`, [...segs, key]);
    return undefined;
  }

  /** A list of strings; a single string is accepted as a one-element list when `allowSingle`. */
  strList(obj: Record<string, unknown>, key: string, segs: Seg[], allowSingle = false): string[] | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      if (allowSingle && (typeof v === 'string' || typeof v === 'number')) return [String(v)];
      this.error(`'${key}' must be a list, got ${typeName(v)}`, [...segs, key]);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((item, i) => {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
      else this.error(`'${key}' entries must be strings, got ${typeName(item)}`, [...segs, key, i]);
    });
    return out;
  }

  intList(obj: Record<string, unknown>, key: string, segs: Seg[]): number[] | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    const list = Array.isArray(v) ? v : [v];
    const out: number[] = [];
    list.forEach((item, i) => {
      const n = typeof item === 'string' && /^\d+$/.test(item.trim()) ? Number(item) : item;
      if (typeof n === 'number' && Number.isInteger(n)) out.push(n);
      else this.error(`'${key}' entries must be integers, got ${JSON.stringify(item)}`, Array.isArray(v) ? [...segs, key, i] : [...segs, key]);
    });
    return out;
  }

  condition(obj: Record<string, unknown>, key: string, segs: Seg[]): Condition {
    const v = obj[key];
    if (v === undefined || v === null || v === '') return 'or';
    if (typeof v === 'string' && (v.toLowerCase() === 'and' || v.toLowerCase() === 'or')) return v.toLowerCase() as Condition;
    this.error(`'${key}' must be 'and' or 'or', got ${JSON.stringify(v)}`, [...segs, key]);
    return 'or';
  }
}

/** Comma-separated string or list → trimmed, non-empty strings. */
export function stringOrList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map((x) => String(x).trim()).filter(Boolean);
  return String(v)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
