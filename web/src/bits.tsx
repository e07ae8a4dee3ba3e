import type { Clipped, GroupCost, GroupSummary } from './api.js';
import { finished, isLive } from './api.js';
import { count, pct, usd } from './format.js';

export const Outcome = ({ value }: { value: string | null }) => (
  <span class={`badge ${value ?? 'none'}`}>{value ?? '…'}</span>
);

export const Progress = ({ g }: { g: GroupSummary }) => {
  const done = finished(g);
  const part = (n: number) => ({ width: `${g.total ? (n / g.total) * 100 : 0}%` });
  return (
    <div class="progress-cell">
      <div class="bar" title={`${done}/${g.total}`}>
        <span class="passed" style={part(g.passed + g.completed)} />
        <span class="failed" style={part(g.failed)} />
        <span class="error" style={part(g.error + g.failedRuns)} />
        <span class="canceled" style={part(g.canceled)} />
      </div>
      <span class="progress-text" data-testid="progress">
        {count(done)}/{count(g.total)} {isLive(g) ? 'running' : g.canceled ? 'canceled' : 'done'}
      </span>
    </div>
  );
};

export const PassRate = ({ g }: { g: GroupSummary }) => {
  const graded = g.passed + g.failed + g.error;
  return <span class="rate">{g.kind === 'eval' ? pct(g.passed, graded) : pct(g.completed, finished(g))}</span>;
};

export const Loading = ({ error }: { error?: string | null }) =>
  error ? <p class="error-box">{error}</p> : <p class="muted">Loading…</p>;

/** A run's spend: the target's calls, then the judges' when any judge was paid. */
export const Cost = ({ cost }: { cost: GroupCost | null }) =>
  cost ? (
    <span title="target | judge">
      {usd(cost.targetUsd)}
      {cost.judgeUsd !== null && <span class="muted"> | {usd(cost.judgeUsd)}</span>}
    </span>
  ) : (
    <span class="muted">…</span>
  );

/** Text as text: every model or agent string on this page goes through here into a text node, never markup. */
export const TextBlock = ({ value, testid }: { value: Clipped; testid?: string }) => (
  <>
    <pre class="text" data-testid={testid}>
      {value.text}
    </pre>
    {value.truncated && (
      <p class="muted">
        showing the first {value.text.length.toLocaleString('en')} of {value.length.toLocaleString('en')} characters
      </p>
    )}
  </>
);
