import { type GraderReason, parseCaseDetail } from '../bundle/case-detail.js';
import { isRecord } from '../records.js';
import type { JournalEntry, StoredResult } from '../store/store.js';

/** Text the case page gets inline; the rest is a download of the artifact (a 10 MB output never ships whole). */
export const previewChars = 256 * 1024;

export interface Clipped {
  text: string;
  /** Characters in the whole text. */
  length: number;
  truncated: boolean;
}

export const clip = (text: string, max = previewChars): Clipped => ({
  text: text.length > max ? text.slice(0, max) : text,
  length: text.length,
  truncated: text.length > max,
});

/** One step as the case page shows it: its record, and the messages a prompt step exchanged. */
export interface StepView {
  stepId: string;
  status: string;
  attempts: number;
  error: unknown;
  transcript: { role: string; content: Clipped; toolCalls: unknown }[];
  output: Clipped;
}

export interface AttemptView {
  seq: number;
  runId: string;
  attempt: number;
  row: StoredResult['row'];
  output: Clipped | null;
  graders: GraderReason[];
  steps: StepView[];
  journal: { seq: number; stepId: string; attempt: number; ops: unknown; createdAt: number }[];
  artifacts: { name: string; size: number }[];
}

const transcriptOf = (output: unknown): StepView['transcript'] => {
  const messages = isRecord(output) && Array.isArray(output.transcript) ? output.transcript : [];
  return messages.flatMap((m: unknown) =>
    isRecord(m)
      ? [
          {
            role: String(m.role ?? ''),
            content: clip(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')),
            toolCalls: m.tool_calls ?? m.toolCalls ?? null,
          },
        ]
      : [],
  );
};

const stepsOf = (resultJson: string | undefined): StepView[] => {
  if (resultJson === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(resultJson);
  } catch {
    return [];
  }
  const steps = isRecord(value) && Array.isArray(value.steps) ? value.steps : [];
  return steps.flatMap((s: unknown) => {
    if (!isRecord(s)) return [];
    const { transcript: _transcript, ...rest } = isRecord(s.output) ? s.output : { value: s.output };
    return [
      {
        stepId: String(s.stepId ?? ''),
        status: String(s.status ?? ''),
        attempts: Number(s.attempts ?? 1),
        error: s.error ?? null,
        transcript: transcriptOf(s.output),
        output: clip(JSON.stringify(rest, null, 2), 64 * 1024),
      },
    ];
  });
};

/** What the case page shows of one committed attempt, built from its stored artifacts and the run's journal. */
export const attemptView = (result: StoredResult, journal: readonly JournalEntry[]): AttemptView => {
  const resultJson = result.files['result.json'];
  const detail = resultJson === undefined ? undefined : parseCaseDetail(resultJson);
  return {
    seq: result.seq,
    runId: result.runId,
    attempt: result.attempt,
    row: result.row,
    output: detail?.output === undefined ? null : clip(detail.output),
    graders: detail?.reasons ?? [],
    steps: stepsOf(resultJson),
    journal: journal.map((j) => ({
      seq: j.seq,
      stepId: j.stepId,
      attempt: j.attempt,
      ops: j.ops,
      createdAt: j.createdAt,
    })),
    artifacts: Object.entries(result.files)
      .map(([name, text]) => ({ name, size: Buffer.byteLength(text) }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
  };
};
