import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isRecord } from '../../records.js';
import { existingFile, isFileRef } from '../files.js';
import { globFiles, isGlob } from '../glob.js';
import type { Path, Source } from '../source.js';
import { toLiquid } from './nunjucks.js';
import { checkKeys } from './refuse.js';

/** A prompt of the translation and where it was written. */
export interface TranslatedPrompt {
  prompt: { id?: string; text: string };
  at: Path;
}

const textExts = ['.txt', '.md', '.j2', '.njk', '.tmpl', ''];
const chatExts = ['.json', '.yaml', '.yml'];

/** The files a `file://` prompt names: one, or every match of a glob. */
const promptFiles = (source: Source, at: Path, ref: string, dir: string): string[] => {
  const rel = ref.slice('file://'.length);
  if (!isGlob(rel)) return [existingFile(source, at, rel, dir)];
  const files = globFiles(rel, dir);
  if (files.length === 0) throw source.fail(at, `no file matches ${ref}`, `fix the pattern: it is relative to ${dir}`);
  return files;
};

/**
 * A `.txt` file holds several prompts separated by `---` lines; a JSON or YAML file is one chat prompt,
 * a template that becomes a list of messages only once rendered, so it is kept as text.
 */
const fromFile = (source: Source, at: Path, file: string): string[] => {
  const ext = path.extname(file).toLowerCase();
  const text = readFileSync(file, 'utf8');
  if (chatExts.includes(ext)) return [text];
  if (textExts.includes(ext))
    return text
      .split(/^-{3,}\s*$/m)
      .map((p) => p.trim())
      .filter((p) => p !== '');
  throw source.fail(
    at,
    `cannot load prompts from ${path.basename(file)}`,
    'Proctor reads prompts from .txt/.md files (several separated by --- lines) and JSON/YAML chat files; write a function prompt as a template',
  );
};

const expand = (source: Source, at: Path, text: string, dir: string): string[] =>
  isFileRef(text) ? promptFiles(source, at, text, dir).flatMap((f) => fromFile(source, at, f)) : [text];

/** `prompts:` of a promptfoo config: strings, `file://` files and globs, `{raw|id, label}` and message lists. */
export const translatePrompts = (source: Source, raw: unknown, dir: string): TranslatedPrompt[] => {
  const entries: [Path, unknown][] = Array.isArray(raw) ? raw.map((e, i) => [['prompts', i], e]) : [[['prompts'], raw]];
  const out: TranslatedPrompt[] = [];
  for (const [at, entry] of entries) {
    if (typeof entry === 'string') {
      for (const text of expand(source, at, entry, dir)) out.push({ prompt: { text: toLiquid(text) }, at });
    } else if (Array.isArray(entry)) {
      out.push({ prompt: { text: toLiquid(JSON.stringify(entry)) }, at });
    } else if (isRecord(entry)) {
      checkKeys(source, at, entry, ['id', 'raw', 'label'], {
        config: 'set model parameters on the provider instead',
        function: 'write the prompt as a template',
      });
      const body = entry.raw ?? entry.id;
      if (typeof body !== 'string')
        throw source.fail(
          at,
          'a prompt needs `raw:` text or an `id: file://…`',
          'write `raw: "…"` or `id: file://prompt.txt`',
        );
      const texts = expand(source, [...at, entry.raw === undefined ? 'id' : 'raw'], body, dir);
      texts.forEach((text, i) => {
        const label = typeof entry.label === 'string' ? entry.label : undefined;
        const id = label === undefined ? undefined : texts.length > 1 ? `${label}-${i + 1}` : label;
        out.push({ prompt: { ...(id !== undefined ? { id } : {}), text: toLiquid(text) }, at });
      });
    } else
      throw source.fail(
        at,
        'a prompt must be text, a file:// reference or a mapping',
        'write `- "Answer: {{ question }}"`',
      );
  }
  return out;
};
