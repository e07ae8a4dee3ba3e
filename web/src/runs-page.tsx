import { useEffect, useState } from 'preact/hooks';
import { type GroupListing, getJson, isLive } from './api.js';
import { Cost, Loading, PassRate, Progress } from './bits.js';
import { count, duration, tone, when } from './format.js';
import { NewRun } from './new-run.js';

// The runs list's status filter: which runs each choice keeps.
const statuses = {
  running: (g: GroupListing) => isLive(g),
  'with failures': (g: GroupListing) => !isLive(g) && g.failed + g.error + g.failedRuns > 0,
  'all passed': (g: GroupListing) => !isLive(g) && g.failed + g.error + g.failedRuns + g.canceled === 0,
  canceled: (g: GroupListing) => g.canceled > 0,
};
type Status = keyof typeof statuses | '';
type Page = { runs: GroupListing[]; more: boolean };

export const RunsPage = () => {
  const [runs, setRuns] = useState<GroupListing[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [status, setStatus] = useState<Status>('');
  const [compare, setCompare] = useState<string[]>([]);
  // Pages past the newest (which the live feed keeps fresh), loaded on request; `more`: another page may follow.
  const [older, setOlder] = useState<{ runs: GroupListing[]; more: boolean }>({ runs: [], more: false });
  useEffect(() => {
    getJson<Page>('/runs').then(
      (r) => {
        setRuns(r.runs);
        setOlder({ runs: [], more: r.more });
      },
      (e: Error) => setError(e.message),
    );
    const events = new EventSource('/api/v1/events');
    events.addEventListener('runs', (e) => setRuns(JSON.parse((e as MessageEvent<string>).data) as GroupListing[]));
    return () => events.close();
  }, []);
  if (!runs) return <Loading error={error} />;
  const loadOlder = () => {
    const last = older.runs.at(-1) ?? runs.at(-1);
    if (last)
      getJson<Page>(`/runs?before=${last.createdAt}&before_id=${encodeURIComponent(last.groupId)}`).then(
        (r) => setOlder({ runs: [...older.runs, ...r.runs], more: r.more }),
        (e: Error) => setError(e.message),
      );
  };
  const listed = [...runs, ...older.runs.filter((o) => !runs.some((r) => r.groupId === o.groupId))];
  const shown = listed.filter(
    (r) =>
      (!text || `${r.groupId} ${r.kind} ${r.targets.join(' ')}`.includes(text)) && (!status || statuses[status](r)),
  );
  const toggle = (id: string) => setCompare((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id].slice(-2)));
  return (
    <section>
      <div class="toolbar">
        <h1>Runs</h1>
        <input placeholder="Filter runs…" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status)} aria-label="status">
          <option value="">any status</option>
          {Object.keys(statuses).map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        {compare.length === 2 ? (
          <a
            class="button"
            href={`/compare?base=${encodeURIComponent(compare[0]!)}&head=${encodeURIComponent(compare[1]!)}`}
          >
            Compare selected
          </a>
        ) : (
          <span class="muted">tick two eval runs to compare</span>
        )}
      </div>
      <NewRun />
      <table class="grid">
        <thead>
          <tr>
            <th />
            <th>Run</th>
            <th>Kind</th>
            <th>Targets</th>
            <th>Progress</th>
            <th class="num">Passed</th>
            <th class="num">Failed</th>
            <th class="num">Error</th>
            <th class="num">Canceled</th>
            <th class="num">Pass rate</th>
            <th>Started</th>
            <th class="num">Duration</th>
            <th class="num" title="target calls | judges' calls">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {shown.map((g) => (
            <tr key={g.groupId} data-run={g.groupId}>
              <td>
                {g.kind === 'eval' && (
                  <input type="checkbox" checked={compare.includes(g.groupId)} onChange={() => toggle(g.groupId)} />
                )}
              </td>
              <td class="mono">
                <a href={`/runs/${encodeURIComponent(g.groupId)}`}>{g.groupId}</a>
              </td>
              <td>{g.kind}</td>
              <td>{g.targets.join(', ')}</td>
              <td>
                <Progress g={g} />
              </td>
              <td class={`num ${tone(g.passed + g.completed, 'pass')}`}>{count(g.passed + g.completed)}</td>
              <td class={`num ${tone(g.failed, 'fail')}`}>{count(g.failed)}</td>
              <td class={`num ${tone(g.error + g.failedRuns, 'err')}`}>{count(g.error + g.failedRuns)}</td>
              <td class={`num ${tone(g.canceled, '')}`}>{count(g.canceled)}</td>
              <td class="num">
                <PassRate g={g} />
              </td>
              <td>{when(g.startedAt ?? g.createdAt)}</td>
              <td class="num">{duration(g.startedAt ?? g.createdAt, g.queued + g.running ? null : g.finishedAt)}</td>
              <td class="num" data-testid="cost">
                <Cost cost={g.cost} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {listed.length === 0 && <p class="muted">No runs yet. Start one above or with `proctor eval run`.</p>}
      {older.more && (
        <button type="button" class="secondary" onClick={loadOlder}>
          Older runs…
        </button>
      )}
    </section>
  );
};
