import { useEffect, useState } from 'preact/hooks';
import { type Clipped, type Comparison, type GroupSummary, getJson } from './api.js';
import { Loading, Outcome, TextBlock } from './bits.js';
import { score } from './format.js';
import { navigate } from './router.js';

type Change = Comparison['regressed'][number];
type Rate = NonNullable<Comparison['overall']['base']>;

const kinds = [
  ['regressed', 'Regressions'],
  ['fixed', 'Fixes'],
  ['score_changed', 'Score changed'],
  ['outcome_changed', 'Outcome changed'],
  ['only_in_base', 'Only in base'],
  ['only_in_head', 'Only in head'],
] as const;

const rate = (r: Rate | null) => (r ? `${(r.pass_rate * 100).toFixed(1)}%` : '–');

const n = (x: number) => x.toLocaleString('en');

/** One line on what changed; `results compare` is the gate, this page only shows. */
const headline = ({ counts }: Comparison): string =>
  counts.common === 0
    ? 'The two runs share no case.'
    : `${n(counts.common)} cases in both runs: ${n(counts.regressed)} regressed, ${n(counts.fixed)} fixed, ` +
      `${n(counts.unchanged)} unchanged` +
      (counts.only_in_base + counts.only_in_head > 0
        ? `; ${n(counts.only_in_base)} only in base, ${n(counts.only_in_head)} only in head.`
        : '.');

const Output = ({ group, caseKey }: { group: string; caseKey: string }) => {
  const [out, setOut] = useState<Clipped | null | undefined>(undefined);
  useEffect(() => {
    getJson<{ attempts: { output: Clipped | null }[] }>(
      `/runs/${encodeURIComponent(group)}/cases/${encodeURIComponent(caseKey)}`,
    ).then(
      (r) => setOut(r.attempts[r.attempts.length - 1]?.output ?? null),
      () => setOut(null),
    );
  }, [group, caseKey]);
  if (out === undefined) return <p class="muted">loading…</p>;
  return out ? <TextBlock value={out} /> : <p class="muted">no output on this side</p>;
};

export const ComparePage = ({ query }: { query: URLSearchParams }) => {
  const base = query.get('base') ?? '';
  const head = query.get('head') ?? '';
  const [runs, setRuns] = useState<GroupSummary[]>([]);
  const [c, setC] = useState<Comparison | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<Change | null>(null);
  useEffect(() => {
    getJson<{ runs: GroupSummary[] }>('/runs').then((r) => setRuns(r.runs.filter((g) => g.kind === 'eval')));
  }, []);
  useEffect(() => {
    setC(null);
    setOpen(null);
    if (base && head)
      getJson<Comparison>(`/compare?base=${encodeURIComponent(base)}&head=${encodeURIComponent(head)}`).then(
        setC,
        (e: Error) => setError(e.message),
      );
  }, [base, head]);
  const pick = (side: 'base' | 'head', v: string) => {
    const next = new URLSearchParams(query);
    next.set(side, v);
    navigate(`/compare?${next}`, true);
  };
  const flips = c ? kinds.flatMap(([k, label]) => c[k].map((ch) => ({ kind: k, label, ch }))) : [];
  return (
    <section>
      <div class="toolbar">
        <h1>Compare</h1>
        {(['base', 'head'] as const).map((side) => (
          <label key={side}>
            {side}{' '}
            <select value={side === 'base' ? base : head} onChange={(e) => pick(side, e.currentTarget.value)}>
              <option value="">choose a run</option>
              {runs.map((r) => (
                <option key={r.groupId} value={r.groupId}>
                  {r.groupId}
                </option>
              ))}
            </select>
          </label>
        ))}
      </div>
      {!(base && head) ? (
        <p class="muted">Choose a base and a head run.</p>
      ) : !c ? (
        <Loading error={error} />
      ) : (
        <>
          <p class="verdict">{headline(c)}</p>
          <div class="cards">
            <div class="card">
              <div class="label">Pass rate</div>
              <div class="big">
                {rate(c.overall.base)} → {rate(c.overall.head)}{' '}
                {c.overall.delta !== null && (
                  <span class={c.overall.delta < 0 ? 'fail' : 'pass'}>
                    ({c.overall.delta >= 0 ? '+' : ''}
                    {(c.overall.delta * 100).toFixed(1)} pt)
                  </span>
                )}
              </div>
            </div>
            {kinds.map(([k, label]) => (
              <div class={`card kind-${k}`} key={k}>
                <div class="label">{label}</div>
                <div class="big" data-testid={`count-${k}`}>
                  {n(c.counts[k])}
                </div>
              </div>
            ))}
          </div>
          <h2>Changed cases</h2>
          {kinds.some(([k]) => c[k].length < c.counts[k]) && (
            <p class="muted" data-testid="listed">
              Listed: the first {n(Math.max(...kinds.map(([k]) => c[k].length)))} of each kind, in case key order.
            </p>
          )}
          <table class="grid compact" data-testid="flips">
            <thead>
              <tr>
                <th>Change</th>
                <th>Test</th>
                <th>Target</th>
                <th>Base</th>
                <th>Head</th>
              </tr>
            </thead>
            <tbody>
              {flips.map(({ kind, label, ch }) => (
                <tr
                  key={`${kind}${ch.key}`}
                  class={`flip ${kind} ${open?.key === ch.key ? 'selected' : ''}`}
                  onClick={() => setOpen(ch)}
                >
                  <td>{label}</td>
                  <td class="mono">{ch.identity.test}</td>
                  <td>{ch.identity.target}</td>
                  <td>
                    {ch.base ? <Outcome value={ch.base.outcome} /> : '–'} {score(ch.base?.score)}
                  </td>
                  <td>
                    {ch.head ? <Outcome value={ch.head.outcome} /> : '–'} {score(ch.head?.score)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {open && (
            <div class="side-by-side" data-testid="diff">
              <div>
                <h3>Base · {base}</h3>
                <Output group={base} caseKey={open.key} />
              </div>
              <div>
                <h3>Head · {head}</h3>
                <Output group={head} caseKey={open.key} />
              </div>
            </div>
          )}
        </>
      )}
    </section>
  );
};
