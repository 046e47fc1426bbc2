/**
 * A strict RFC 4180 reader for the export tests: records end with CRLF, a field is quoted or holds no quote, comma,
 * CR or LF, a quote inside a quoted field is doubled. Anything else throws, so a malformed export fails its test.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        field += text[i];
        i += 1;
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bare ${JSON.stringify(text[i])} at ${i}`);
        field += text[i];
        i += 1;
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i += 1;
      continue;
    }
    if (text.slice(i, i + 2) !== '\r\n') throw new Error(`expected CRLF or a comma at ${i}`);
    i += 2;
    records.push(record);
    record = [];
  }
  if (record.length) throw new Error('the last record does not end with CRLF');
  return records;
}

/** Records as objects keyed by the header row; every record must have as many fields as the header. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error('no header row');
  return rows.map((row) => {
    if (row.length !== header.length) throw new Error(`a record has ${row.length} fields, the header ${header.length}`);
    return Object.fromEntries(header.map((name, index) => [name, row[index]!]));
  });
}
