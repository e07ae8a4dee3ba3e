import { useEffect, useState } from 'preact/hooks';
import { type MatrixCell as Cell, getJson } from './api.js';
import { score } from './format.js';

const shownTests = 200;

/** Tests (grouped by eval) × targets: each cell its cases' passes out of all and mean score. */
export const Matrix = ({ group, version }: { group: string; version: number }) => {
  const [cells, setCells] = useState<Cell[] | null>(null);
  const [complete, setComplete] = useState(true);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (open)
      getJson<{ cells: Cell[]; complete: boolean }>(`/runs/${encodeURIComponent(group)}/matrix`).then((r) => {
        setCells(r.cells);
        setComplete(r.complete);
      });
  }, [group, open, version]);
  if (!open)
    return (
      <h2>
        <button type="button" class="link" onClick={() => setOpen(true)}>
          ▸ Test × target matrix
        </button>
      </h2>
    );
  if (!cells) return <p class="muted">Loading matrix…</p>;
  const targets = [...new Set(cells.map((c) => c.target))].sort();
  const tests = new Map<string, Map<string, Cell>>();
  for (const c of cells) {
    const k = `${c.evalPath}\u0000${c.test}`;
    if (!tests.has(k)) tests.set(k, new Map());
    tests.get(k)?.set(c.target, c);
  }
  const rows = [...tests].slice(0, shownTests);
  return (
    <>
      <h2>Test × target matrix</h2>
      <div class="matrix-wrap">
        <table class="grid compact matrix" data-testid="matrix">
          <thead>
            <tr>
              <th>Eval</th>
              <th>Test</th>
              {targets.map((t) => (
                <th key={t}>{t}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([k, byTarget]) => {
              const [evalPath, test] = k.split('\u0000');
              return (
                <tr key={k}>
                  <td class="mono muted">{evalPath}</td>
                  <td class="mono">{test}</td>
                  {targets.map((t) => {
                    const c = byTarget.get(t);
                    if (!c) return <td key={t} />;
                    const state = c.passed === c.total ? 'passed' : c.error > 0 ? 'error' : 'failed';
                    return (
                      <td key={t} class={`cell ${state}`} title={`${c.passed}/${c.total} passed`}>
                        {c.total > 1
                          ? `${c.passed}/${c.total}`
                          : state === 'passed'
                            ? '✓'
                            : state === 'error'
                              ? '!'
                              : '✗'}{' '}
                        <span class="muted">{score(c.meanScore)}</span>
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {(tests.size > shownTests || !complete) && (
        <p class="muted" data-testid="matrix-more">
          first {shownTests} of {complete ? '' : 'more than '}
          {tests.size.toLocaleString('en')} tests; filter the cases below
        </p>
      )}
    </>
  );
};
