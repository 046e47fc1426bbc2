import { createHash } from 'node:crypto';
import { Lexer } from 'yaml';
import { AppError, ValidationError, type FieldIssue } from '../../errors.js';
import { parseTemplate, separateUserVariables, type NucleiTemplate, type PayloadFileReader, type TemplateIssue } from '../../scanner/nuclei/index.js';
import { MAX_TEMPLATE_BYTES } from './schemas.js';

/**
 * Judges uploaded template text before anything is stored: size, text (not binary), shapes that would make a
 * YAML parser work too hard (deep flow nesting, alias bombs), then nuclei's own rules via parseTemplate.
 * Pure: no database, no storage.
 */

/** Flow collections (`[`, `{`) nested deeper than this are refused before parsing: real templates use two or three. */
export const MAX_FLOW_DEPTH = 32;
/**
 * Alias nodes (`*name`) allowed in one template. Real templates have none; parseTemplate also bounds the
 * expansion (the yaml package's maxAliasCount), this refuses a bomb before it is even composed.
 */
export const MAX_ALIASES = 64;

export interface CheckedTemplate {
  template: NucleiTemplate;
  /** Features the engine does not run. */
  warnings: TemplateIssue[];
  /**
   * Variables the template needs from the user (`{{username}}`, `{{token}}`...): not a warning, the template runs
   * faithfully once they are given (workspace template settings or a scan's templateVariables); until then scans
   * skip it with the names missing.
   */
  userVariables: string[];
  /** sha256 of the UTF-8 bytes, hex. */
  checksum: string;
  sizeBytes: number;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `http[0].matchers[1].type (line 12, column 9)`, or `fileContent (line 3, column 1)` for the document itself. */
export function issueField(issue: TemplateIssue): string {
  const at = issue.line !== undefined ? ` (line ${issue.line}${issue.column !== undefined ? `, column ${issue.column}` : ''})` : '';
  return `${issue.path || 'fileContent'}${at}`;
}

function invalid(issues: TemplateIssue[]): ValidationError {
  const details: FieldIssue[] = issues.slice(0, 50).map((issue) => ({ field: issueField(issue), message: issue.message }));
  const first = details[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return new ValidationError(`Invalid template: ${first.field}: ${first.message}${more}`, details);
}

/** 1-based line and column of a character offset. */
function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * Characters YAML does not allow in a stream (C0 and C1 controls other than tab, CR, LF and NEL, NUL, DEL),
 * lone surrogates and U+FFFD (what a decoder leaves of invalid UTF-8) mean the content is not template text:
 * refused at the first one, with its position.
 */
// eslint-disable-next-line no-control-regex
const NOT_TEXT =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u0084\u0086-\u009f\ufffd]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function textProblem(text: string): TemplateIssue | undefined {
  const match = NOT_TEXT.exec(text);
  if (!match) return undefined;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return {
    message: `the content is not text: it holds the character U+${code} (binary data?); a template is UTF-8 YAML text`,
    path: '',
    ...positionOf(text, match.index),
  };
}

/** Walks the token stream (iterative: no recursion however deep the input) for flow depth and aliases. */
function structureProblem(text: string): TemplateIssue | undefined {
  let depth = 0;
  let aliases = 0;
  let at = 0;
  for (const token of new Lexer().lex(text)) {
    // The lexer's control tokens (document and scalar markers) are single characters below U+0020; they are not source.
    if (token.length === 1 && token < ' ' && token !== '\t' && token !== '\n' && token !== '\r') continue;
    if (token === '[' || token === '{') {
      depth += 1;
      if (depth > MAX_FLOW_DEPTH) return { message: `collections are nested deeper than ${MAX_FLOW_DEPTH} levels`, path: '', ...positionOf(text, at) };
    } else if (token === ']' || token === '}') {
      depth = Math.max(0, depth - 1);
    } else if (token.startsWith('*')) {
      aliases += 1;
      if (aliases > MAX_ALIASES) {
        return {
          message: `more than ${MAX_ALIASES} YAML aliases (*name): refused as a possible alias bomb (templates need none)`,
          path: '',
          ...positionOf(text, at),
        };
      }
    }
    at += token.length;
  }
  return undefined;
}

/**
 * The template as the engine will run it, or an error: 413 for oversized content, 400 (with every problem's
 * path and line in `details`) for content that is not a valid nuclei template. `readPayloadFile`: the helper
 * files of the archive the template is imported with; without it a payload file is an error (import-files.ts).
 */
export function checkTemplateContent(text: string, readPayloadFile?: PayloadFileReader): CheckedTemplate {
  const sizeBytes = Buffer.byteLength(text, 'utf8');
  if (sizeBytes > MAX_TEMPLATE_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `A template may be at most ${MAX_TEMPLATE_BYTES} bytes; this one has ${sizeBytes}`);
  }
  if (text.trim() === '') throw invalid([{ message: 'the template is empty', path: '' }]);
  const early = textProblem(text) ?? structureProblem(text);
  if (early) throw invalid([early]);
  let parsed: ReturnType<typeof parseTemplate>;
  try {
    parsed = parseTemplate(text, { readPayloadFile });
  } catch (error) {
    // parseTemplate reports what it knows as errors; anything thrown is the YAML library giving up on the input.
    throw invalid([{ message: `the template could not be read: ${(error as Error).message.split('\n')[0]}`, path: '' }]);
  }
  if (parsed.errors.length || !parsed.template) throw invalid(parsed.errors.length ? parsed.errors : [{ message: 'the template could not be read', path: '' }]);
  const { warnings, userVariables } = separateUserVariables(parsed.template, parsed.warnings);
  return { template: parsed.template, warnings, userVariables, checksum: sha256(text), sizeBytes };
}
