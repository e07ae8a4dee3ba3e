import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify as toToml } from 'smol-toml';
import { stringify as toYaml } from 'yaml';
import { InputError } from '../../errors.js';
import type { JsonObject } from '../../records.js';
import { isRecord } from '../../records.js';
import type { Env } from '../env.js';
import { YamlSource } from '../yaml-source.js';
import { isPromptfooConfig } from './detect.js';
import { translatePromptfoo } from './translate.js';

export interface ImportedFiles {
  evalFile: string;
  configFile: string;
  /** Things the user should know: an API key left out, … */
  notes: string[];
}

const isReference = (value: unknown): boolean => typeof value === 'string' && value.includes('${');

/**
 * Writes the native equivalent of a promptfoo config beside it: `NAME.eval.yaml` (prompts, tests and their
 * files read in) and `proctor.toml` with one `[targets.LABEL]` per provider. The same translation serves
 * `eval run`, so the imported eval plans the same cases, with the same fingerprints. An API key written into
 * the config is not copied: Proctor reads it from the environment (`api_key_env`).
 */
export const importPromptfoo = (file: string, env: Env): ImportedFiles => {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch {
    throw new InputError(
      `no such file: ${file}`,
      { file },
      'pass the path of a promptfoo config (promptfooconfig.yaml)',
    );
  }
  const display = path.basename(abs);
  const parsed = YamlSource.parse(display, text);
  if (!isPromptfooConfig(abs, parsed.value))
    throw new InputError(
      `${display} is not a promptfoo config`,
      { file: display },
      'it is a native eval already: run it with `proctor eval run`',
    );
  const native = translatePromptfoo(parsed, dir, dir, env).value as JsonObject;
  const name = display.replace(/\.(ya?ml|json)$/, '');
  const evalFile = path.join(dir, `${name}.eval.yaml`);
  const configFile = path.join(dir, 'proctor.toml');
  for (const out of [evalFile, configFile])
    if (existsSync(out))
      throw new InputError(
        `${path.basename(out)} already exists in ${dir}`,
        { file: path.basename(out) },
        'move it aside, then import again',
      );

  const notes: string[] = [];
  const targets: Record<string, JsonObject> = {};
  for (const target of native.targets as JsonObject[]) {
    const { label, ...rest } = target;
    if (rest.api_key !== undefined && !isReference(rest.api_key)) {
      delete rest.api_key;
      notes.push(
        `target "${String(label)}": its API key was not copied; set ${String(rest.api_key_env ?? 'OPENAI_API_KEY')} in the environment`,
      );
    }
    targets[String(label)] = rest;
  }
  const evalDoc: Record<string, unknown> = { ...native, targets: Object.keys(targets) };
  const tests = evalDoc.tests;
  // One test with no vars and no assertions is what the translation adds when the config has no tests.
  if (Array.isArray(tests) && tests.length === 1 && isRecord(tests[0]) && Object.keys(tests[0]).join() === 'id,vars')
    delete evalDoc.tests;
  writeFileSync(
    evalFile,
    `# Imported from ${display} by \`proctor import promptfoo\`.\n${toYaml(evalDoc, { lineWidth: 0, aliasDuplicateObjects: false })}`,
  );
  writeFileSync(configFile, `# Targets imported from ${display}.\n${toToml({ targets })}\n`);
  return { evalFile, configFile, notes };
};
