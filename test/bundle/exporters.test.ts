import { afterAll, describe, expect, it } from 'vitest';
import { type ExportFormat, exporters, isExportFormat } from '../../src/bundle/exporters.js';
import { readIndex } from '../../src/bundle/reader.js';
import { parseCsv } from '../../src/plan/csv.js';
import { removeBundles, renderExport, writeBundle } from './fixture.js';
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
  const text = renderExport(await exporters[format].load(), { dir, runId: 'run <1>', warn: (m) => warnings.push(m) });
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

  it('json: one document holding the summary and the latest row per key', async () => {
    const doc = JSON.parse(await render('json', bundle())) as {
      run_id: string;
      summary: { counts: { total: number; failed: number } };
      cases: { key: string; outcome: string }[];
    };
    expect(doc.run_id).toBe('run <1>');
    expect(doc.summary.counts).toMatchObject({ total: 4, failed: 1 });
    expect(doc.cases.map((c) => c.outcome)).toEqual(['passed', 'failed', 'error', 'canceled']);
  });

  it('csv: a case per line with its failure reason, quoted so a spreadsheet reads it back and runs no formula', async () => {
    const dir = writeBundle([
      { test: 'ok', outcome: 'passed' },
      { test: 'bad', outcome: 'failed', output: hostile, reason: `expected "plum",\ngot ${hostile}` },
      { test: '=HYPERLINK(1)', outcome: 'failed', output: 'x', reason: '-2+3' },
      { test: 'boom', outcome: 'error', error: { kind: 'timeout', message: 'no answer, 5s', retryable: true } },
    ]);
    const [header, ...rows] = parseCsv(await render('csv', dir)).map((r) => r.cells);
    expect(rows).toHaveLength(4);
    const byTest = new Map(
      rows.map((cells) => [cells[1], Object.fromEntries(header?.map((name, i) => [name, cells[i]]) ?? [])]),
    );
    expect(byTest.get('ok')).toMatchObject({ outcome: 'passed', score: '1', reason: '', target: 'echo' });
    expect(byTest.get('bad')?.reason).toBe(`equals: expected "plum",`);
    expect(byTest.get('boom')).toMatchObject({ reason: 'timeout: no answer, 5s', error_kind: 'timeout' });
    expect(byTest.get(`'=HYPERLINK(1)`)?.reason).toBe('equals: -2+3');
  });

  it('markdown: headline, a table per target and the failures, with cells that cannot break the table', async () => {
    const text = await render('markdown', bundle());
    expect(text).toMatch(
      /^\n## ❌ Proctor run run &lt;1&gt;: 1\/4 passed \(25\.0%\), 1 failed, 1 errored, 1 canceled\n/,
    );
    expect(text).toContain('| echo | 1 | 1 | 1 | 0 | 33.3% |');
    expect(text).toContain('### Failures (2)');
    const failureLines = text.split('\n').filter((l) => l.startsWith('| a.eval.yaml'));
    expect(failureLines).toHaveLength(2);
    // Every row keeps its 4 cells: a pipe or a newline in a reason is escaped, HTML is shown as text.
    for (const line of failureLines) expect(line.split(/(?<!\\)\|/)).toHaveLength(6);
    expect(text).not.toContain('<script>');
    expect(text).toContain('&lt;script&gt;');
    expect(text).toContain('| error | timeout: no answer &lt;in&gt; 5s |');
    // Read by eye once, as GitHub renders it; a change to the summary's shape shows up as a diff here.
    await expect(text).toMatchFileSnapshot('./snapshots/job-summary.md');
  });
});
