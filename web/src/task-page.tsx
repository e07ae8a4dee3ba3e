import { useEffect, useState } from 'preact/hooks';
import { type Clipped, getJson } from './api.js';
import { Loading, TextBlock } from './bits.js';
import { duration, when } from './format.js';

interface TaskDetail {
  run: {
    runId: string;
    groupId: string;
    taskId: string;
    status: string;
    createdAt: number;
    startedAt: number | null;
    finishedAt: number | null;
    error: { kind: string; message: string } | null;
  };
  instance: { spec: { steps?: { id: string; type: string }[] }; startStep: string | null } | null;
  journal: { seq: number; stepId: string; attempt: number; ops: Clipped; output: Clipped; createdAt: number }[];
  /** An eval case's steps as its result records them: it journals only its resources. */
  recorded: { stepId: string; status: string; attempts: number }[];
}

/** A recorded step's badge: completed and failed as their outcomes are, skipped and seeded steps plain. */
const recordBadge = (status: string): string =>
  status === 'completed' ? 'passed' : status === 'failed' ? 'failed' : 'none';

/** One task run: its steps, which of them the journal has recorded, and its state, refreshed while it runs. */
export const TaskPage = ({ runId }: { runId: string }) => {
  const [d, setD] = useState<TaskDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      getJson<TaskDetail>(`/tasks/${encodeURIComponent(runId)}`).then(
        (r) => {
          setD(r);
          if (r.run.status === 'QUEUED' || r.run.status === 'RUNNING') timer = setTimeout(load, 1000);
        },
        (e: Error) => setError(e.message),
      );
    load();
    return () => clearTimeout(timer);
  }, [runId]);
  if (!d) return <Loading error={error} />;
  const done = new Map(d.journal.map((j) => [j.stepId, j]));
  const recorded = new Map(d.recorded.map((s) => [s.stepId, s]));
  return (
    <section>
      <p class="crumbs">
        <a href={`/runs/${encodeURIComponent(d.run.groupId)}`}>← group {d.run.groupId}</a>
      </p>
      <div class="toolbar">
        <h1>
          <span class="muted">Task run</span> <span class="mono">{d.run.runId}</span>
        </h1>
        <span class={`badge ${d.run.status.toLowerCase()}`}>{d.run.status}</span>
      </div>
      <p>
        task <span class="mono">{d.run.taskId}</span> · started {when(d.run.startedAt)} ·{' '}
        {duration(d.run.startedAt, d.run.finishedAt)}
      </p>
      {d.run.error && (
        <div class="error-box">
          <strong>{d.run.error.kind}</strong>: {d.run.error.message}
        </div>
      )}
      <h2>Steps</h2>
      <table class="grid compact steps">
        <thead>
          <tr>
            <th>Step</th>
            <th>Type</th>
            <th>State</th>
            <th>Finished</th>
          </tr>
        </thead>
        <tbody>
          {(d.instance?.spec.steps ?? []).map((s) => {
            const entry = done.get(s.id);
            const record = recorded.get(s.id);
            return (
              <tr key={s.id} data-step={s.id}>
                <td class="mono">{s.id}</td>
                <td>{s.type}</td>
                <td>
                  {entry ? (
                    <span class="badge passed">done</span>
                  ) : record ? (
                    <span class={`badge ${recordBadge(record.status)}`}>{record.status}</span>
                  ) : (
                    <span class="badge none">pending</span>
                  )}
                </td>
                <td class="muted">
                  {entry
                    ? `${when(entry.createdAt)} · attempt ${entry.attempt}`
                    : record
                      ? `attempt ${record.attempts}`
                      : ''}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <h2>Journal</h2>
      {d.journal.map((j) => (
        <details key={j.seq}>
          <summary>
            #{j.seq} <span class="mono">{j.stepId}</span>{' '}
            <span class="muted">
              attempt {j.attempt} · {when(j.createdAt)}
            </span>
          </summary>
          <h3>Context changes</h3>
          <TextBlock value={j.ops} />
          <h3>Output</h3>
          <TextBlock value={j.output} />
        </details>
      ))}
      {d.journal.length === 0 && (
        <p class="muted">
          no journal entries
          {d.recorded.length > 0 ? ': a case journals only the workspaces and services it starts' : ''}
        </p>
      )}
    </section>
  );
};
