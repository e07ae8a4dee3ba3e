import { useEffect, useState } from 'preact/hooks';
import { type AttemptView, type Clipped, getJson, type RowView } from './api.js';
import { Loading, Outcome, TextBlock } from './bits.js';
import { score, usd } from './format.js';

/** An attempt as the case page reads it: the server's view, its bundle row typed for reading. */
type Attempt = Omit<AttemptView, 'row'> & { row: RowView };

// What an artifact preview shows; the server reads no more of the file than this.
const previewChars = 1_000_000;

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A tool call's name and arguments, in the OpenAI (`function: {name, arguments}`) or Anthropic (`name, input`) shape. */
const callOf = (c: unknown): { name: string; args: string } | undefined => {
  const fn = isRec(c) && isRec(c.function) ? c.function : c;
  if (!isRec(fn) || typeof fn.name !== 'string') return undefined;
  const raw = fn.arguments ?? fn.input ?? fn.args ?? '';
  let args = typeof raw === 'string' ? raw : JSON.stringify(raw, null, 2);
  try {
    if (typeof raw === 'string' && raw.trim().startsWith('{')) args = JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    // Not JSON: shown as the model wrote it.
  }
  return { name: fn.name, args };
};

/** Each call as its name and arguments (text, never markup); anything of another shape as its JSON. */
const ToolCalls = ({ calls }: { calls: unknown }) => {
  const list = Array.isArray(calls) ? calls.map(callOf) : [];
  if (list.length === 0 || list.some((c) => c === undefined))
    return <pre class="text tool">{JSON.stringify(calls, null, 2)}</pre>;
  return (
    <>
      {list.map((c, i) => (
        <div class="tool-call" key={i} data-testid="tool-call">
          <div class="role">
            tool call <span class="mono">{c?.name}</span>
          </div>
          <pre class="text tool">{c?.args}</pre>
        </div>
      ))}
    </>
  );
};

const artifactUrl = (a: Attempt, name: string, download = false) =>
  `${a.artifactsUrl}/${encodeURIComponent(name)}${download ? '?download=1' : `?head=${previewChars}`}`;

const Artifacts = ({ a }: { a: Attempt }) => {
  const [preview, setPreview] = useState<{ name: string; text: Clipped } | null>(null);
  const show = async (name: string) => {
    const res = await fetch(artifactUrl(a, name));
    const text = await res.text();
    const length = Number(res.headers.get('X-Artifact-Length') ?? text.length);
    setPreview({ name, text: { text, length, truncated: length > text.length } });
  };
  return (
    <>
      <table class="grid compact">
        <tbody>
          {a.artifacts.map((f) => (
            <tr key={f.name}>
              <td class="mono">{f.name}</td>
              <td class="num muted">{f.size.toLocaleString('en')}</td>
              <td>
                <button type="button" class="link" onClick={() => show(f.name)}>
                  preview
                </button>
                <span class="muted"> · </span>
                <a href={artifactUrl(a, f.name, true)} download={f.name}>
                  download
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {preview && (
        <>
          <h3 class="mono">{preview.name}</h3>
          <TextBlock value={preview.text} testid="artifact-preview" />
        </>
      )}
    </>
  );
};

export const CasePage = ({ group, caseKey }: { group: string; caseKey: string }) => {
  const [attempts, setAttempts] = useState<Attempt[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<number | null>(null);
  useEffect(() => {
    getJson<{ attempts: Attempt[] }>(`/runs/${encodeURIComponent(group)}/cases/${encodeURIComponent(caseKey)}`).then(
      (r) => setAttempts(r.attempts),
      (e: Error) => setError(e.message),
    );
  }, [group, caseKey]);
  if (!attempts) return <Loading error={error} />;
  const a = attempts.find((x) => x.seq === chosen) ?? attempts[attempts.length - 1]!;
  const id: Partial<NonNullable<RowView['identity']>> = a.row.identity ?? {};
  return (
    <section>
      <p class="crumbs">
        <a href={`/runs/${encodeURIComponent(group)}`}>← run {group}</a>
      </p>
      <div class="toolbar">
        <h1>
          <Outcome value={a.row.outcome ?? null} /> <span class="mono">{String(id.test ?? caseKey)}</span>
        </h1>
        <span class="muted">score {score(a.row.score)}</span>
      </div>
      <div class="cards">
        {Object.entries(id).map(([k, v]) => (
          <div class="card" key={k}>
            <div class="label">{k}</div>
            <div class="mono">{String(v)}</div>
          </div>
        ))}
        <div class="card">
          <div class="label">duration · tokens · cost</div>
          <div>
            {a.row.duration_ms ?? '–'} ms · {a.row.usage ? a.row.usage.input_tokens + a.row.usage.output_tokens : '–'} ·{' '}
            {usd(a.row.usage?.cost_usd ?? null)}
            {a.row.usage?.judge && <span class="muted"> | judge {usd(a.row.usage.judge.cost_usd)}</span>}
          </div>
        </div>
      </div>
      {attempts.length > 1 && (
        <div class="tabs">
          Attempts:{' '}
          {attempts.map((x) => (
            <button type="button" key={x.seq} class={x === a ? 'tab on' : 'tab'} onClick={() => setChosen(x.seq)}>
              #{x.attempt} <Outcome value={x.row.outcome ?? null} />
            </button>
          ))}
        </div>
      )}
      {a.row.error && (
        <div class="error-box">
          <strong>{a.row.error.kind}</strong>: {a.row.error.message}
        </div>
      )}
      {a.result && !a.result.complete && (
        <p class="notice" data-testid="result-cut">
          result.json holds {a.result.length.toLocaleString('en')} characters: this page shows what its first{' '}
          {a.result.shown.toLocaleString('en')} hold.{' '}
          <a href={artifactUrl(a, 'result.json', true)} download="result.json">
            Download it whole
          </a>
        </p>
      )}
      <h2>Output</h2>
      {a.output ? <TextBlock value={a.output} testid="output" /> : <p class="muted">no output recorded</p>}
      <h2>Graders</h2>
      {a.graders.length > 0 && (
        <table class="grid compact">
          <tbody>
            {a.graders.map((g, i) => (
              <tr key={`${g.id}${i}`}>
                <td>
                  <Outcome value={g.pass ? 'passed' : 'failed'} />
                </td>
                <td class="mono">{g.id}</td>
                <td class="num">{score(g.score)}</td>
                <td class="reason">{g.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {a.graders.length === 0 && <p class="muted">no grader verdicts recorded</p>}
      <h2>Transcript</h2>
      {a.steps.flatMap((s) =>
        s.transcript.map((m, i) => (
          <div class={`message ${m.role}`} key={`${s.stepId}-${i}`} data-testid="message">
            <div class="role">
              {m.role} <span class="muted">· {s.stepId}</span>
            </div>
            <TextBlock value={m.content} />
            {m.toolCalls !== null && <ToolCalls calls={m.toolCalls} />}
          </div>
        )),
      )}
      {a.steps.every((s) => s.transcript.length === 0) && <p class="muted">no messages recorded</p>}
      <h2>Steps</h2>
      {a.steps.map((s) => (
        <details key={s.stepId}>
          <summary>
            <span class="mono">{s.stepId}</span> <span class={`badge ${s.status}`}>{s.status}</span>{' '}
            <span class="muted">{s.attempts} attempt(s)</span>
          </summary>
          {s.error !== null && <pre class="text">{JSON.stringify(s.error, null, 2)}</pre>}
          <TextBlock value={s.output} />
        </details>
      ))}
      <h2>Journal</h2>
      {a.journal.length > 0 && (
        <table class="grid compact">
          <tbody>
            {a.journal.map((j) => (
              <tr key={j.seq}>
                <td class="num">{j.seq}</td>
                <td class="mono">{j.stepId}</td>
                <td class="num">#{j.attempt}</td>
                <td>
                  <TextBlock value={j.ops} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {a.journal.length === 0 && (
        <p class="muted">
          no journal entries: a case journals only the workspaces and services it starts (its steps are above)
        </p>
      )}
      <h2>Artifacts</h2>
      <Artifacts a={a} />
    </section>
  );
};
