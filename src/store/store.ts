import type { ErrorRecord } from '../errors.js';
import type { JsonObject, Outcome } from '../records.js';
import type { ArtifactHead, AttemptHead, JournalHead, ResultStep } from './case-artifacts.js';
import type {
  CaseFacets,
  CasePage,
  CaseQuery,
  GroupCost,
  GroupFilter,
  GroupSummary,
  MatrixCell,
} from './explorer-reads.js';
import type { QueueLedger } from './queue-ledger.js';
import type { FollowedResult } from './result-cursor.js';

export const runStatuses = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELED'] as const;
export type RunStatus = (typeof runStatuses)[number];
export type TerminalStatus = 'COMPLETED' | 'FAILED' | 'CANCELED';
export const isTerminal = (status: RunStatus): status is TerminalStatus =>
  status === 'COMPLETED' || status === 'FAILED' || status === 'CANCELED';

/** The process that executes a run: a run is orphaned when this process is gone. */
export interface RunOwner {
  host: string;
  pid: number;
  /** The owner process's start time (ms since epoch), so a reused pid is not taken for the owner. */
  startedAt: number;
}

/** One row of the run index. */
export interface RunRecord {
  runId: string;
  groupId: string;
  taskId: string;
  instanceId: string;
  status: RunStatus;
  /** Target label, for eval cases: progress per target reads it. */
  target: string | null;
  caseKey: string | null;
  outcome: Outcome | null;
  score: number | null;
  error: ErrorRecord | null;
  metadata: JsonObject;
  owner: RunOwner | null;
  seenAt: number | null;
  /** When another process asked the owner to cancel this run; the owner polls for it and honours it. */
  cancelRequestedAt: number | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** A run and its instance, created together and QUEUED before any work starts. */
export interface NewRun {
  runId: string;
  groupId: string;
  taskId: string;
  instanceId: string;
  target?: string;
  caseKey?: string;
  metadata: JsonObject;
  /** The task as plain data, so any worker can execute the instance from the store alone. */
  spec: JsonObject;
  /** The starting context (seeded from `--context-json` or empty). */
  context: JsonObject;
  startStep?: string;
  /**
   * The submitting process. A QUEUED run names its submitter as owner until a worker claims it, so another
   * process's reconciler can tell a live submitter's queue from an orphan that nothing will ever run.
   */
  owner?: RunOwner;
  /** Set for a run the queue runner executes: it is dispatched to workers and fenced (queue-ledger.ts). */
  queue?: QueuedWork;
}

/** What a queue run needs besides the run and its instance: where it is dispatched, its limits, the request's rest. */
export interface QueuedWork {
  pool: string;
  limits: { key: string; limit: number }[];
  work: JsonObject;
}

/** The durable state of one run as created: its task, starting context and start step (the journal is apart). */
export interface InstanceRecord {
  instanceId: string;
  taskId: string;
  spec: JsonObject;
  context: JsonObject;
  startStep: string | null;
  createdAt: number;
}

/** A set or unset of one top-level-or-dotted path of the run context. */
export type ContextOp = { op: 'set'; path: string; value: unknown } | { op: 'unset'; path: string };

/** One completed step: exactly the change it made to the context, and its output. */
export interface JournalEntry {
  instanceId: string;
  /** 1-based position; a second write of the same position is refused, so a stale completion cannot win. */
  seq: number;
  stepId: string;
  attempt: number;
  ops: ContextOp[];
  output: unknown;
  createdAt: number;
}

/**
 * An eval case attempt's result as the bundle holds it, in plain data: committed with the run's terminal
 * status in one transaction, it is the record a bundle is materialised from.
 */
export interface CaseResultRecord {
  caseKey: string;
  attempt: number;
  target: string;
  /** The identity's eval path. */
  evalPath: string;
  /** index.jsonl's row (snake_case, the bundle's contract). */
  row: JsonObject;
  /** The case's artifact files by name (`result.json`, diffs, snapshots). */
  files: Record<string, string>;
}

/** A committed case result, with its place in commit order. */
export interface StoredResult extends CaseResultRecord {
  seq: number;
  runId: string;
  groupId: string;
  committedAt: number;
}

/** Where a committed result sits in commit order: enough for a reader to tell whether it holds it already. */
export interface ResultHead {
  seq: number;
  runId: string;
}

/** A committed result as a bundle writes it: its row as the stored text (the index line as it is), its files. */
export interface ResultText {
  runId: string;
  caseKey: string;
  attempt: number;
  row: string;
  files: Readonly<Record<string, string>>;
}

/**
 * The results of one group this process commits, held from their finish until the group's materialiser takes
 * them, so a result this process wrote is not read back. A held result may not be committed yet: only one the
 * store shows committed (`readResultHeads`) may be taken. A result whose finish is refused or fails is dropped.
 */
export interface ResultWatch {
  take(runId: string): ResultText | undefined;
  close(): void;
}

/** What a run's terminal status records: the outcome and score of an eval case, or why it failed. */
export interface RunFinish {
  status: TerminalStatus;
  outcome?: Outcome;
  score?: number;
  error?: ErrorRecord;
  /** An eval case's result, committed with the status or not at all (not when the run was already terminal). */
  result?: CaseResultRecord;
  /**
   * When the run started: recorded by the finish when no claim did (a local eval case that ended before its
   * claim was due, src/runners/local.ts); a claim's start is kept.
   */
  startedAt?: number;
}

/** Counts of a group's runs, by target and by status/outcome: all the follower needs. */
export interface ProgressRow {
  target: string | null;
  status: RunStatus;
  outcome: Outcome | null;
  count: number;
}

/** Which runs `listRuns` returns, newest first (at most `limit`, default 1000). */
export interface RunFilter {
  status?: RunStatus;
  /** Any of these statuses (with `status`, both must hold). */
  statuses?: readonly RunStatus[];
  groupId?: string;
  limit?: number;
}

/** An owner of non-terminal runs, as the reconciler sees it: null when the runs name no owner. */
export interface OwnerSummary {
  owner: RunOwner | null;
  runs: number;
  /** The least recent `seen_at` (or creation time) among them: a lease is measured from it. */
  oldestSeenAt: number;
}

/** Which non-terminal runs an orphan sweep fails: those of one owner (or ownerless), optionally only stale ones. */
export interface OrphanSelector {
  owner: RunOwner | null;
  /** Only runs last seen before this time (epoch ms); absent: every run of the owner. */
  seenBefore?: number;
}

/** What `pruneFinished` removed. */
export interface PruneReport {
  /** Runs whose step state (instance and journal, and a queue run's work) was deleted. */
  runs: number;
  journalEntries: number;
}

/** How soon a write commits: `now` when its caller waits on it, `grouped` when nothing waits but its report. */
export type CommitPace = 'now' | 'grouped';

/** The durable record every runner and every reader shares. Writes that would overwrite a terminal status are no-ops. */
export interface Store {
  createRuns(runs: readonly NewRun[]): Promise<void>;
  /**
   * QUEUED → RUNNING for this owner; false when the run is no longer QUEUED (canceled, taken). `grouped`: the
   * caller goes on without waiting for it, so it may wait a few ms to share a commit with others.
   */
  claimRun(runId: string, owner: RunOwner, now: number, pace?: CommitPace): Promise<boolean>;
  /** Grouped writes commit now, not at their window's end: the caller knows no others are coming to share it. */
  commitGrouped(): void;
  /**
   * Sets a terminal status unless one is already set; false when it was. `finish.result` is committed in the
   * same transaction, only when the status is; a finish with a result holds up nothing but its own report, so
   * it may wait a few ms to share a commit with others.
   */
  finishRun(runId: string, finish: RunFinish, now: number): Promise<boolean>;
  /** A group's committed results after `afterSeq`, in commit order, at most `limit`. */
  readResults(groupId: string, afterSeq: number, limit: number): Promise<StoredResult[]>;
  /** The heads of a group's committed results after `afterSeq`, in commit order, at most `limit`. */
  readResultHeads(groupId: string, afterSeq: number, limit: number): Promise<ResultHead[]>;
  /** The committed results at these positions (`seq`), as texts, in commit order. */
  readResultTexts(seqs: readonly number[]): Promise<ResultText[]>;
  /** Holds the results of the group that this store commits from now on, until taken or closed. */
  watchResults(groupId: string): ResultWatch;
  /** How many results a group has committed. */
  countResults(groupId: string): Promise<number>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  listRuns(filter: RunFilter): Promise<RunRecord[]>;
  groupProgress(groupId: string): Promise<ProgressRow[]>;
  /** How many runs of a group are terminal: a cheap test for "done" between full progress readings. */
  countFinished(groupId: string): Promise<number>;
  /** How many runs of a group are QUEUED or RUNNING: read from an index range only as long as that count. */
  countActive(groupId: string): Promise<number>;
  getInstance(instanceId: string): Promise<InstanceRecord | undefined>;
  /** Appends the entry: false, and nothing written, when its position is taken. */
  appendJournal(entry: JournalEntry): Promise<boolean>;
  readJournal(instanceId: string): Promise<JournalEntry[]>;
  /** Renews `seen_at` of every non-terminal run this owner holds, QUEUED ones included. */
  heartbeat(owner: RunOwner, now: number): Promise<void>;
  /** Records a request to cancel a non-terminal run, for its owner to honour; false when it is terminal. */
  requestCancel(runId: string, now: number): Promise<boolean>;
  /** requestCancel for every non-terminal run of a group, in one statement however many; returns how many. */
  requestGroupCancel(groupId: string, now: number): Promise<number>;
  /** The non-terminal runs of this owner whose cancel another process requested. */
  cancelRequested(owner: RunOwner): Promise<string[]>;
  /** Every owner of a non-terminal run. */
  runOwners(): Promise<OwnerSummary[]>;
  /**
   * Marks FAILED, with `finish`'s error, the non-terminal runs the selector matches, in one statement: a run
   * claimed by another owner or renewed meanwhile no longer matches. Returns the runs it changed.
   */
  failOrphans(selector: OrphanSelector, finish: RunFinish, now: number): Promise<RunRecord[]>;
  /** The queue runner's dispatch, fencing and leases; PostgreSQL only (the queue runner refuses SQLite). */
  queueLedger(): QueueLedger;
  /**
   * Deletes the instance and journal of every run that finished before `finishedBefore`. The runs' index rows
   * and committed results stay.
   */
  pruneFinished(finishedBefore: number): Promise<PruneReport>;
  /** The store's size on disk in bytes (its tables, for a shared PostgreSQL database). */
  sizeBytes(): Promise<number>;
  /** Gives space freed by deletes back to the file system, where the backend needs telling (SQLite). */
  compact(): Promise<void>;
  close(): Promise<void>;
  // Reads for the explorer (server/): runs list, case table, case attempts, matrix, artifacts.
  /** Groups of the run index with their counts, newest first. */
  listGroups(filter: GroupFilter): Promise<GroupSummary[]>;
  /** A page of a group's latest case results matching `query`, and the number matching in all. */
  queryCases(groupId: string, query: CaseQuery): Promise<CasePage>;
  /** Every committed attempt of a case in a group, oldest first, with the first `chars` of its result.json. */
  caseAttemptHeads(groupId: string, caseKey: string, chars: number): Promise<AttemptHead[]>;
  /** The first `chars` (all without) of artifact `name` of the result committed as `seq`. */
  artifactHead(seq: number, name: string, chars?: number): Promise<ArtifactHead | undefined>;
  /** An instance's journal with `chars` of each entry's ops and output (their JSON texts). */
  journalHeads(instanceId: string, chars: number): Promise<JournalHead[]>;
  /** The steps a run's committed result.json records, without their outputs but a verifier's results. */
  resultSteps(runId: string): Promise<ResultStep[]>;
  /** (eval, test, target) cells over a group's latest results, at most `limit`. */
  caseMatrix(groupId: string, limit: number): Promise<MatrixCell[]>;
  caseFacets(groupId: string): Promise<CaseFacets>;
  /** What a group's committed results spent, target and judges apart. */
  groupCost(groupId: string): Promise<GroupCost>;
  /** Where a live follower starts to get only what commits from now on. */
  resultCursor(groupId: string): Promise<string>;
  /** A group's results committed after `cursor`, in an order no later commit can precede, each with its cursor. */
  followResults(groupId: string, cursor: string, limit: number): Promise<FollowedResult[]>;
}
