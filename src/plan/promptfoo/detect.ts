import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isRecord } from '../../records.js';

/** Top-level keys only promptfoo configs have; a native eval file has none of them. */
const promptfooKeys = [
  'providers',
  'defaultTest',
  'scenarios',
  'evaluateOptions',
  'outputPath',
  'sharing',
  'env',
  'commandLineOptions',
  'extensions',
  'derivedMetrics',
  'nunjucksFilters',
  'redteam',
  'writeLatestResults',
  'tags',
  'metadata',
  '$schema',
];

export const isNativeEvalName = (file: string): boolean => /\.eval\.ya?ml$/.test(file);

/** promptfoo's default file name, which a directory is searched for. */
export const isPromptfooName = (file: string): boolean => /^promptfooconfig\.ya?ml$/.test(path.basename(file));

/**
 * A promptfoo config, recognised by its content: a key only promptfoo has, or `targets:` written promptfoo's
 * way (`openai:gpt-4o`, `{id: …}`). A file not named `*.eval.yaml` is read as promptfoo's too, since that is
 * the only other format an eval can be in.
 */
export const isPromptfooConfig = (file: string, value: unknown): boolean => {
  if (!isRecord(value)) return false;
  if (promptfooKeys.some((k) => k in value) || !isNativeEvalName(file)) return true;
  const targets = value.targets;
  return (
    Array.isArray(targets) &&
    targets.some((t) => (typeof t === 'string' && /^[a-z]+:|^file:\/\//.test(t)) || (isRecord(t) && 'id' in t))
  );
};

/** A YAML file, found in a directory under another name, that holds a promptfoo config (prompts and providers). */
export const looksLikePromptfoo = (file: string): boolean => {
  let value: unknown;
  try {
    value = parseYaml(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
  return isRecord(value) && 'prompts' in value && ('providers' in value || 'targets' in value);
};
