import { afterAll, describe, expect, it } from 'vitest';
import { type ExportFormat, exporters, isExportFormat } from '../../src/bundle/exporters.js';
import { readIndex } from '../../src/bundle/reader.js';
import { removeBundles, writeBundle } from './fixture.js';
import { childrenNamed, parseXml } from './xml-check.js';

const hostile = '<script>alert("x")</script> & \'quotes\' \u0001 ]]>';

const bundle = () =>
  writeBundle([
    { test: 'ok', outcome: 'failed', output: 'first try' },
    { test: 'ok', outcome: 'passed' },
    { test: 'bad', outcome: 'failed', output: hostile, reason: `expected "plum", got ${hostile}` },
    { test: 'boom', outcome: 'error', error: { kind: 'timeout', message: 'no answer <in> 5s', retryable: true } },
    { test: 'stop', outcome: 'canceled', target: 'other' },
  ]);

const render = async (format: ExportFormat, dir: string): Promise<string> => {
  const warnings: string[] = [];
  const text = [...(await exporters[format].load())({ dir, runId: 'run <1>', warn: (m) => warnings.push(m) })].join('');
  expect(warnings).toEqual([]);
  return text;
};

afterAll(removeBundles);

describe('exporters', () => {
  it('registers each format by name', () => {
    expect(isExportFormat('junit')).toBe(true);
    expect(isExportFormat('toString')).toBe(false);
  });

  it('jsonl: the latest row per key, as index.jsonl spells it', async () => {
    const dir = bundle();
    const lines = (await render('jsonl', dir)).trimEnd().split('\n');
    const rows = lines.map((l) => JSON.parse(l) as { key: string; outcome: string; duration_ms: number });
    expect(rows.map((r) => [r.key, r.outcome])).toEqual([
      ['ok-echo', 'passed'],
      ['bad-echo', 'failed'],
      ['boom-echo', 'error'],
      ['stop-other', 'canceled'],
    ]);
    const original = readIndex(dir).rows[1];
    expect(lines[0]).toBe(JSON.stringify(original));
  });

  it('junit: well-formed XML with a suite per target and failure, error and skipped elements', async () => {
    const root = parseXml(await render('junit', bundle()));
    expect(root.name).toBe('testsuites');
    expect(root.attrs).toMatchObject({ name: 'proctor run <1>', tests: '4', failures: '1', errors: '1', skipped: '1' });
    const suites = childrenNamed(root, 'testsuite');
    expect(suites.map((s) => [s.attrs.name, s.attrs.tests])).toEqual([
      ['echo', '3'],
      ['other', '1'],
    ]);
    const [ok, bad, boom] = childrenNamed(suites[0]!, 'testcase');
    expect(ok?.attrs.name).toBe('a.eval.yaml · ok · p1 · 0');
    expect(ok?.children).toEqual([]);
    const failure = childrenNamed(bad!, 'failure')[0]!;
    expect(failure.attrs.message).toContain('<script>alert("x")</script> & \'quotes\'');
    expect(failure.text).toContain('FAIL equals: expected "plum"');
    expect(childrenNamed(bad!, 'system-out')[0]?.text).toContain('<script>');
    expect(childrenNamed(boom!, 'error')[0]?.attrs).toEqual({ type: 'timeout', message: 'no answer <in> 5s' });
    expect(childrenNamed(childrenNamed(suites[1]!, 'testcase')[0]!, 'skipped')).toHaveLength(1);
  });

  it('html: one self-contained page that escapes every user string', async () => {
    const page = await render('html', bundle());
    expect(page).not.toContain('<script');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
    expect(page).toContain('Proctor results · run &lt;1&gt;');
    expect(page).not.toMatch(/<link|src=|https?:\/\//);
    expect(page).toMatch(/id="f-failed"><label for="f-failed">failed \(1\)<\/label>/);
    expect(page.match(/<details class="case o-/g)).toHaveLength(4);
    expect(page).toContain('no answer &lt;in&gt; 5s');
  });
});
