import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../errors.js';

const files: Record<string, string> = {
  'proctor.toml': `# Proctor's project file (see the README, "proctor.toml").
[runner]
kind = "local"

[store]
url = "sqlite:.proctor/proctor.db"

# An OpenAI-compatible endpoint; the key is read from the environment when the target runs, never stored.
[targets.model]
kind = "openai"
base_url = "\${OPENAI_BASE_URL:-https://api.openai.com/v1}"
model = "\${OPENAI_MODEL:-gpt-4o-mini}"
api_key = "\${OPENAI_API_KEY:-}"

[defaults]
max_concurrency = 4
retries = 2
`,
  'evals/example.eval.yaml': `# yaml-language-server: $schema=../node_modules/proctor/schema/eval.schema.json
# Runs offline with the echo target; replace it with \`model\` (from proctor.toml) to ask a real model.
description: A first eval
targets:
  - { label: echo, kind: echo }
prompts:
  - "Repeat after me: {{ phrase }}"
tests:
  - id: hello
    vars: { phrase: hello world }
    assert:
      - { type: icontains, value: "hello world" }
  - id: shout
    vars: { phrase: WE ARE LIVE }
    assert:
      - { type: contains, value: LIVE }
      - { type: javascript, value: "output.length < 100" }
`,
};

/** Writes a starter proctor.toml and eval into `dir`; refuses to overwrite anything that exists. */
export const initProject = (dir: string): string[] => {
  const existing = Object.keys(files).filter((rel) => existsSync(join(dir, rel)));
  if (existing.length) {
    throw new InputError(
      `${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''} in ${dir}`,
      undefined,
      'run `proctor init` in a new directory, or move those files aside',
    );
  }
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return Object.keys(files);
};
