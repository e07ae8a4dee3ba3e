import { caseDetailOf, type GraderReason } from '../bundle/case-detail.js';
import { isRecord } from '../records.js';
import type { ArtifactHead, AttemptHead, JournalHead } from '../store/case-artifacts.js';
import { singleTurn } from '../targets/transcript.js';
import { parsePartialJson } from './partial-json.js';

/** Text the case page gets inline per string; the rest is a download of the artifact. */
export const previewChars = 256 * 1024;
/**
 * How much of a result.json the case page reads: a 10 MB transcript is never read whole, and what this head
 * holds (output, the first messages, usually the graders) is shown.
 */
export const resultHeadChars = 1024 * 1024;

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

/** A head read from the store, shown as at most `max` characters: truncated when either cut it. */
export const clipHead = (head: ArtifactHead, max = previewChars): Clipped => ({
  text: head.text.slice(0, max),
  length: head.length,
  truncated: head.length > Math.min(max, head.text.length),
});

/** A JSON head to read: indented as far as it parses; `length` is the stored text's. */
export const prettyHead = (head: ArtifactHead, max = previewChars): Clipped => {
  const { value, complete } = parsePartialJson(head.text);
  const text = JSON.stringify(value, null, 2) ?? '';
  return { text: text.slice(0, max), length: head.length, truncated: !complete || text.length > max };
};

/** What the pages read of each journal entry's ops and output: a prompt step's holds its whole transcript. */
export const journalHeadChars = previewChars;

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
  row: AttemptHead['row'];
  output: Clipped | null;
  graders: GraderReason[];
  steps: StepView[];
  /** How much of result.json the page shows: all of it unless `complete` is false (cut, or not JSON at its end). */
  result: { shown: number; length: number; complete: boolean } | null;
  journal: { seq: number; stepId: string; attempt: number; ops: Clipped; createdAt: number }[];
  artifacts: { name: string; size: number }[];
  /** Where the artifacts are fetched: this URL, a slash and a manifest name. */
  artifactsUrl: string;
}

/** A step's messages: its transcript, or the prompt and reply of a prompt step whose record left it out as theirs. */
const transcriptOf = (output: unknown): StepView['transcript'] => {
  if (!isRecord(output)) return [];
  const { transcript, prompt, text } = output;
  const messages = Array.isArray(transcript)
    ? transcript
    : typeof prompt === 'string' && typeof text === 'string'
      ? singleTurn(prompt, text)
      : [];
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

const stepsOf = (value: unknown): StepView[] => {
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

/**
 * What the case page shows of one committed attempt, from the head of its result.json and the run's journal (an
 * eval case journals only its resources: its result records its steps). A head cut short still shows what it
 * holds; the graders, which come last, are then `pastHead`, read in the database (resultSteps). Journal entries
 * come as heads too.
 */
export const attemptView = (
  head: AttemptHead,
  journal: readonly JournalHead[],
  artifactsUrl: string,
  pastHead?: GraderReason[],
): AttemptView => {
  const parsed = head.result ? parsePartialJson(head.result.text) : undefined;
  // A head that parses as one whole JSON value is the whole file: a cut one always stops inside it.
  const whole = parsed?.complete === true;
  const detail = parsed ? caseDetailOf(parsed.value) : undefined;
  return {
    seq: head.seq,
    runId: head.runId,
    attempt: head.attempt,
    row: head.row,
    output: detail?.output === undefined ? null : clip(detail.output),
    graders: !whole && pastHead?.length ? pastHead : (detail?.reasons ?? []),
    steps: parsed ? stepsOf(parsed.value) : [],
    result: head.result && { shown: head.result.text.length, length: head.result.length, complete: whole },
    journal: journal.map((j) => ({
      seq: j.seq,
      stepId: j.stepId,
      attempt: j.attempt,
      ops: clipHead(j.ops, 16 * 1024),
      createdAt: j.createdAt,
    })),
    artifacts: head.artifacts,
    artifactsUrl,
  };
};
