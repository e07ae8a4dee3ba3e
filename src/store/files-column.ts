import { isOneLineObject } from '../one-line-object.js';

/**
 * The `files` column of a result: a JSON object of its artifact files by name. Each file is a JSON string, except
 * a `result.json` that is compact JSON, which is written as the JSON value it is: written as a string, its every
 * quote was escaped again, a second pass over the largest text of every case (2% of a 5,000-case run's
 * instructions, valgrind).
 * Read back, that value's text is the file's text: SQLite's `json_each` and PostgreSQL's `json_each_text` over
 * `json` give an object's text as written, and JSON.stringify gives back what JSON.stringify wrote.
 */

/**
 * Whether `text` can stand in the column as itself: a result.json on one line, and without `\u` escapes, which
 * PostgreSQL's json refuses for a lone surrogate or a NUL.
 */
const writtenAsValue = (name: string, text: string): boolean =>
  name === 'result.json' && isOneLineObject(text) && !text.includes('\\u');

/** The column's text for a result's files. */
export const filesColumn = (files: Readonly<Record<string, string>>): string => {
  let out = '';
  for (const name in files) {
    const text = files[name] as string;
    out += `${out ? ',' : '{'}${JSON.stringify(name)}:${writtenAsValue(name, text) ? text : JSON.stringify(text)}`;
  }
  return out ? `${out}}` : '{}';
};

/** A result's files from the column's text, each file's text as it was written. */
export const parseFilesColumn = (column: string): Record<string, string> => {
  const files = JSON.parse(column) as Record<string, unknown>;
  for (const name in files) {
    const value = files[name];
    if (typeof value !== 'string') files[name] = JSON.stringify(value);
  }
  return files as Record<string, string>;
};
