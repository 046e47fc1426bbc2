/**
 * A block's `payloads:` and `attack:` (nuclei pkg/protocols/common/generators: New, validate, loadPayloads).
 *
 * - A list is its values (numbers and booleans as text); a string holding a newline is split on it (every
 *   element kept, as nuclei's strings.Split); any other string names a payload file, read through the caller's
 *   `readPayloadFile` (nuclei's helper files: the lines, empty ones skipped). Without a reader a file cannot be
 *   honoured: an error, never a silent skip.
 * - A payload named nowhere in the block (headers, body, path, raw, matchers, extractors) is dropped, as nuclei
 *   does before counting the sets.
 * - `attack` defaults to batteringram, which takes exactly one set (nuclei refuses such a template to load);
 *   pitchfork walks the sets side by side: lists of unequal length are refused here (nuclei would stop at the
 *   shortest one silently, a template bug we prefer to surface).
 * - File references must stay inside the library: relative, no `..`, no backslash.
 */
import { type Ctx, isRecord, type Seg, typeName } from './context.js';

export const ATTACK_TYPES = ['batteringram', 'pitchfork', 'clusterbomb'] as const;
export type AttackType = (typeof ATTACK_TYPES)[number];

export interface PayloadSet {
  name: string;
  values: string[];
  /** The payload file the values came from, as the template names it. */
  file?: string;
}

export interface BlockPayloads {
  attack: AttackType;
  /** In declaration order (the iteration order of clusterbomb; nuclei's is Go's random map order). */
  sets: PayloadSet[];
}

/** A payload file's text by the name the template gives it, or undefined when it is not available. */
export type PayloadFileReader = (reference: string) => string | undefined;

export interface PayloadParseOptions {
  readPayloadFile?: PayloadFileReader;
}

/** Bytes of one payload file the engine reads (nuclei has no bound; ours keeps a template's memory bounded). */
export const MAX_PAYLOAD_FILE_BYTES = 1024 * 1024;

/** Why a payload file reference cannot be honoured, or undefined. */
export function payloadFileProblem(reference: string): string | undefined {
  if (reference.trim() === '') return 'the payload file name is empty';
  if (reference.includes('\\')) return 'a payload file name may not hold a backslash';
  if (reference.startsWith('/') || /^[A-Za-z]:/.test(reference) || reference.startsWith('~')) {
    return 'a payload file must be relative to the template library (absolute paths are refused)';
  }
  if (reference.split('/').includes('..')) return "a payload file may not leave the template library ('..')";
  return undefined;
}

/** nuclei's bufio.Scanner over the file: lines without their CR, empty lines skipped. */
export function payloadFileValues(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line !== '');
}

function scalarText(v: unknown): string | undefined {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return undefined;
}

/**
 * Parses `payloads` / `attack` of a block. `usedIn` is everything of the block a payload may be named in.
 * Returns undefined when the block has no (used) payloads; `skip` when the block cannot run (reported).
 */
export function parsePayloads(
  ctx: Ctx,
  raw: Record<string, unknown>,
  segs: Seg[],
  usedIn: unknown[],
  options: PayloadParseOptions = {},
): { payloads?: BlockPayloads; skip?: string } {
  const spec = raw.payloads;
  if (spec === undefined || spec === null) return {};
  const at = [...segs, 'payloads'];
  if (!isRecord(spec)) {
    ctx.error(`'payloads' must be a mapping of names to values, got ${typeName(spec)}`, at, true);
    return {};
  }
  let attack: AttackType = 'batteringram';
  if (raw.attack !== undefined && raw.attack !== null && raw.attack !== '') {
    const name = typeof raw.attack === 'string' ? raw.attack.trim().toLowerCase() : '';
    if (!(ATTACK_TYPES as readonly string[]).includes(name)) {
      ctx.error(`invalid attack type ${JSON.stringify(raw.attack)}: use ${ATTACK_TYPES.join(', ')}`, [...segs, 'attack']);
      return {};
    }
    attack = name as AttackType;
  }
  const used = JSON.stringify(usedIn);
  const sets: PayloadSet[] = [];
  let skip: string | undefined;
  for (const [name, value] of Object.entries(spec)) {
    const where = [...at, name];
    if (!used.includes(name)) {
      ctx.warn(`payload '${name}' is not used by this request; ignored`, where, true);
      continue;
    }
    if (Array.isArray(value)) {
      const values: string[] = [];
      for (const [i, item] of value.entries()) {
        const text = scalarText(item);
        if (text === undefined) ctx.error(`payload '${name}' values must be scalars, got ${typeName(item)}`, [...where, i]);
        else values.push(text);
      }
      if (values.length === 0) ctx.error(`payload '${name}' has no values`, where, true);
      sets.push({ name, values });
    } else if (isRecord(value)) {
      // nuclei reads low/medium/high lists for fuzzing rules, by the -fuzz-aggression option
      skip = 'payloads with aggression levels (low/medium/high) are not supported';
      ctx.warn(`${skip}; this request block is skipped`, where, true);
    } else if (typeof value === 'string' && value.includes('\n')) {
      sets.push({ name, values: value.split('\n') });
    } else if (typeof value === 'string') {
      const problem = payloadFileProblem(value);
      if (problem) {
        ctx.error(`payload '${name}': ${problem}: ${JSON.stringify(value)}`, where);
        continue;
      }
      const text = options.readPayloadFile?.(value);
      if (text === undefined) {
        ctx.error(
          options.readPayloadFile
            ? `payload '${name}': the file ${JSON.stringify(value)} is not in the template library it came with`
            : `payload '${name}': the file ${JSON.stringify(value)} can only be read from the template library the template is imported with`,
          where,
        );
        continue;
      }
      if (Buffer.byteLength(text, 'utf8') > MAX_PAYLOAD_FILE_BYTES) {
        ctx.error(`payload '${name}': the file ${JSON.stringify(value)} is larger than ${MAX_PAYLOAD_FILE_BYTES} bytes`, where);
        continue;
      }
      const values = payloadFileValues(text);
      if (values.length === 0) ctx.error(`payload '${name}': the file ${JSON.stringify(value)} has no values`, where);
      sets.push({ name, values, file: value });
    } else {
      const text = scalarText(value);
      if (text === undefined) ctx.error(`payload '${name}' must be a list, a file name or text, got ${typeName(value)}`, where);
      else sets.push({ name, values: [text] });
    }
  }
  if (skip) return { skip };
  if (sets.length === 0) return {};
  if (attack === 'batteringram' && sets.length !== 1) {
    ctx.error(
      `the ${raw.attack === undefined ? 'default attack (batteringram)' : 'batteringram attack'} takes exactly one payload; ` +
        `${sets.length} are used (${sets.map((s) => s.name).join(', ')}): set 'attack: pitchfork' or 'attack: clusterbomb'`,
      raw.attack === undefined ? at : [...segs, 'attack'],
      true,
    );
  }
  if (attack === 'pitchfork' && new Set(sets.map((s) => s.values.length)).size > 1) {
    ctx.error(
      `pitchfork pairs the payloads value by value, so they must have as many values: ${sets.map((s) => `${s.name} has ${s.values.length}`).join(', ')}`,
      at,
      true,
    );
  }
  return { payloads: { attack, sets } };
}
