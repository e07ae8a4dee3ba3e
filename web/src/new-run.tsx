import { useState } from 'preact/hooks';
import { getJson, postJson } from './api.js';
import { navigate } from './router.js';

interface ProjectEvals {
  evals: { path: string; targets: string[] }[];
  problem: string | null;
}

/** Start an eval run: the project's eval files and their targets, submitted as `proctor eval run` would. */
export const NewRun = () => {
  const [project, setProject] = useState<ProjectEvals | null>(null);
  const [evals, setEvals] = useState<string[]>([]);
  const [targets, setTargets] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const flip = (list: string[], v: string) => (list.includes(v) ? list.filter((x) => x !== v) : [...list, v]);
  if (!project)
    return (
      <button
        type="button"
        class="secondary"
        onClick={() => getJson<ProjectEvals>('/project').then(setProject, (e: Error) => setError(e.message))}
      >
        New run…{error && ` (${error})`}
      </button>
    );
  const offered = [...new Set(project.evals.filter((e) => evals.includes(e.path)).flatMap((e) => e.targets))];
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await postJson<{ groupId: string }>('/runs', {
        evals,
        targets: targets.filter((t) => offered.includes(t)),
      });
      navigate(`/runs/${encodeURIComponent(r.groupId)}`);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="panel new-run">
      <h2>New eval run</h2>
      {project.problem && <pre class="error-box">{project.problem}</pre>}
      <div class="columns">
        <fieldset>
          <legend>Eval files</legend>
          {project.evals.map((e) => (
            <label key={e.path}>
              <input type="checkbox" checked={evals.includes(e.path)} onChange={() => setEvals(flip(evals, e.path))} />
              <span class="mono">{e.path}</span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Targets (none ticked: all)</legend>
          {offered.map((t) => (
            <label key={t}>
              <input type="checkbox" checked={targets.includes(t)} onChange={() => setTargets(flip(targets, t))} />
              {t}
            </label>
          ))}
        </fieldset>
      </div>
      <div class="actions">
        <button type="button" disabled={busy || evals.length === 0} onClick={start}>
          {busy ? 'Starting…' : 'Start run'}
        </button>
        <button type="button" class="secondary" onClick={() => setProject(null)}>
          Close
        </button>
      </div>
      {error && <pre class="error-box">{error}</pre>}
    </div>
  );
};
