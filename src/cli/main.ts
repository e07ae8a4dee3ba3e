import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { exportFormatHelp, exportFormats } from '../bundle/exporters.js';
import { InputError } from '../errors.js';
import { packageInfo } from '../package-info.js';
import { StoreLostError } from '../store/reconnect.js';
import type { RegradeOptions } from './commands/results-regrade.js';
import { parseDuration } from './duration.js';
import { exitCodes } from './exit-codes.js';

const version = (): string => packageInfo().version;

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

const nonNegativeInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
};

const nonNegativeNumber = (value: string): number => {
  const n = Number(value);
  if (!(n >= 0)) throw new InvalidArgumentError('expected a non-negative number');
  return n;
};

const positiveNumber = (value: string): number => {
  const n = Number(value);
  if (!(n > 0)) throw new InvalidArgumentError('expected a positive number');
  return n;
};

/**
 * Builds the command tree. Each action imports its module on use, so `proctor --help` loads almost nothing
 * (`--version` alone is answered by bin/proctor.js).
 */
const program = (setCode: (code: number) => void): Command => {
  const root = new Command('proctor')
    .description('Evaluate AI agents and LLM applications, durably')
    .version(version(), '-V, --version')
    .exitOverride()
    .showHelpAfterError();

  root
    .command('init')
    .description('write a starter proctor.toml and evals/example.eval.yaml here')
    .action(async () => {
      const { init } = await import('./commands/init.js');
      setCode(init());
    });

  const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
  const evalCmd = root.command('eval').description('run and check eval files');
  evalCmd
    .command('run')
    .description('run evals: every test × prompt × target × sample, graded, into a results bundle')
    .argument('[paths...]', 'eval files or directories (default: the current directory)')
    .option('-j, --max-concurrency <n>', 'most cases in flight at once', positiveInt)
    .option('--retries <n>', 'retries of an infrastructure error (timeout, 429, 5xx, network)', nonNegativeInt)
    .option('--repeat <n>', 'samples per case', positiveInt)
    .option('--timeout <seconds>', 'seconds before a case times out', positiveNumber)
    .option('-o, --output <dir>', 'results bundle directory (default .proctor/results/<run_id>)')
    .option('-q, --quiet', 'print only the final summary')
    .option('--resume <run>', 'skip the cases a run finished (passed or failed), run the rest, append to its bundle')
    .option('--rerun-failed <run>', 'run exactly the cases whose latest result in a run is failed or error')
    .option('--allow-drift', 'let --resume keep results of cases whose prompt, vars, target or graders changed')
    .option('--dry-run', 'plan and print what would run; run and write nothing')
    .option('--detach', 'submit, print the run id and exit; the cases go on (a queue runner); see `runs follow`')
    .option(
      '--export <file>',
      'also write the results here, the format by extension: .json .jsonl .csv .xml .html .md (repeatable)',
      collect,
    )
    .option('--compare <run>', 'compare the bundle with this base run at the end (regressions, fixes)')
    .option('--cassette <mode>', 'model calls from/into cassettes/: replay, record, record-missing or off')
    .option(
      '--budget-usd <usd>',
      'most this command may spend on target and judge calls; the rest is not started',
      positiveNumber,
    )
    .option(
      '--pass-rule <rule>',
      'with --repeat: a case passes when all (default), any, or a fraction of its samples pass',
    )
    .option('--fail-under <rate>', 'exit 1 only when the pass rate, overall or of a target, is below this (0–1)')
    .option('--filter-pattern <regex>', 'only tests whose description (else id) matches')
    .option('--filter-targets <regex>', 'only targets whose label matches')
    .option('-n, --first <n>', 'only the first N tests of each eval file', positiveInt)
    .option('--var <key=value>', 'set a var in every test (repeatable)', collect)
    .option('--env-file, --env-path <file>', 'load environment variables from this file first (KEY=value lines)')
    .action(async (paths: string[], opts) => {
      const { evalRun } = await import('./commands/eval-run.js');
      setCode(await evalRun(paths, opts));
    });
  evalCmd
    .command('validate')
    .description('check eval files without running anything')
    .argument('[paths...]', 'eval files or directories')
    .action(async (paths: string[]) => {
      const { evalValidate } = await import('./commands/eval-validate.js');
      setCode(evalValidate(paths));
    });

  root
    .command('import')
    .description('convert evals of another tool into native ones')
    .command('promptfoo')
    .description('write the native *.eval.yaml and proctor.toml of a promptfoo config, beside it')
    .argument('<config>', 'a promptfoo config (promptfooconfig.yaml)')
    .action(async (config: string) => {
      const { importPromptfooCommand } = await import('./commands/import-promptfoo.js');
      setCode(importPromptfooCommand(config));
    });

  const task = root.command('task').description('run and check task files');
  task
    .command('run')
    .description('run a task (*.task.yaml) through the configured runner and follow it')
    .argument('<task>', 'a task file')
    .option('--target <name>', 'target of prompt steps that name none')
    .option('-k, --k <n>', "instances to run (default: one per entry of the file's seeds, else 1)", positiveInt)
    .option('--seed <key=value>', 'substituted for {{ seed.key }} in every string (repeatable)', collect)
    .option('--set <key=value>', 'a per-run override, recorded as metadata.user_overrides (repeatable)', collect)
    .option('--output-dir <dir>', "write each run's final context, journal and artifacts here")
    .option('--context-json <file>', 'start from this saved context (e.g. a context.json of --output-dir)')
    .option('--start-step <step>', 'with --context-json: the step to continue from; earlier steps are seeded')
    .option('--keep', 'leave workspaces and services up; hold until Ctrl-C, then tear down')
    .option('--retries <n>', 'retries of an infrastructure error in a step', nonNegativeInt)
    .action(async (file: string, opts) => {
      const { taskRun } = await import('./commands/task-run.js');
      setCode(await taskRun(file, opts));
    });
  task
    .command('validate')
    .description('check task files without running anything')
    .argument('<tasks...>', 'task files')
    .option('--seed <key=value>', 'seed values to check with (repeatable)', collect)
    .option('--target <name>', 'target of prompt steps that name none')
    .action(async (files: string[], opts: { seed?: string[]; target?: string }) => {
      const { taskValidate } = await import('./commands/task-validate.js');
      setCode(taskValidate(files, opts));
    });

  const results = root.command('results').description('read results bundles');
  results
    .command('list')
    .description('list the bundles under .proctor/results')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { resultsList } = await import('./commands/results-list.js');
      setCode(resultsList(opts));
    });
  results
    .command('show')
    .description('show a bundle: its summary and each case (latest row per key)')
    .argument('[run]', 'a run id, a bundle directory or an index.jsonl path (default: the latest run)')
    .option('--json', 'print the summary as JSON')
    .option('--failures', 'list only failed and errored cases')
    .action(async (run: string | undefined, opts: { json?: boolean; failures?: boolean }) => {
      const { resultsShow } = await import('./commands/results-show.js');
      setCode(resultsShow(run, opts));
    });
  results
    .command('compare')
    .description(
      'compare two bundles case by case; exit 1 when HEAD regressed or lost cases of BASE, or passes fewer of them',
    )
    .argument('<base>', 'the reference: a run id, a bundle directory or an index.jsonl path')
    .argument('<head>', 'the bundle to check against it, likewise')
    .option('--json', 'print the comparison as JSON')
    .option('--tolerance <n>', 'how many fewer passing cases than BASE the gate allows (default 0)', nonNegativeInt)
    .action(async (base: string, head: string, opts: { json?: boolean; tolerance?: number }) => {
      const { resultsCompare } = await import('./commands/results-compare.js');
      setCode(resultsCompare(base, head, opts));
    });
  results
    .command('regrade')
    .description('grade the stored outputs of a bundle again, into a new bundle, without calling any target')
    .argument('<run>', 'a run id, a bundle directory or an index.jsonl path')
    .option('--assert <file>', 'a YAML list of assertions to grade with, instead of each eval’s own')
    .option('--judge <label>', 'the judge target of model-graded assertions')
    .option('-o, --output <dir>', 'the new bundle (default .proctor/results/<new run id>)')
    .option('-j, --max-concurrency <n>', 'cases graded at once', positiveInt)
    .option('--filter-pattern <regex>', 'only cases whose test id matches')
    .option('--filter-targets <regex>', 'only cases whose target label matches')
    .action(async (run: string, opts: RegradeOptions) => {
      const { resultsRegrade } = await import('./commands/results-regrade.js');
      setCode(await resultsRegrade(run, opts));
    });
  results
    .command('export')
    .description('export the latest row per case of a bundle for other tools')
    .argument('<run>', 'a run id, a bundle directory or an index.jsonl path')
    .addOption(
      results.createOption('--format <format>', exportFormatHelp()).choices(exportFormats).makeOptionMandatory(),
    )
    .option('-o, --output <file>', 'write to this file, atomically (default: stdout)')
    .action(async (run: string, opts: { format: string; output?: string }) => {
      const { resultsExport } = await import('./commands/results-export.js');
      setCode(await resultsExport(run, opts));
    });

  results
    .command('pull')
    .description("write or complete a run's bundle from the store (a follower that died, a run from elsewhere)")
    .argument('<run>', 'the run id')
    .option('-o, --output <dir>', 'bundle directory (default: the bundle the run appended to)')
    .action(async (run: string, opts: { output?: string }) => {
      const { resultsPull } = await import('./commands/results-pull.js');
      setCode(await resultsPull(run, opts));
    });

  const runs = root.command('runs').description('inspect the run index');
  runs
    .command('list')
    .description('list runs, newest first')
    .option('--status <status>', 'only runs with this status (QUEUED, RUNNING, COMPLETED, FAILED, CANCELED)')
    .option('--group <id>', 'only the runs of one eval run')
    .option('--limit <n>', 'at most this many', positiveInt)
    .option('--json', 'print JSON')
    .action(async (opts) => {
      const { runsList } = await import('./commands/runs-list.js');
      setCode(await runsList(opts));
    });
  runs
    .command('show')
    .description('show one run: status, owner, timings, steps and journal')
    .argument('<run_id>')
    .option('--json', 'print JSON')
    .action(async (runId: string, opts: { json?: boolean }) => {
      const { runsShow } = await import('./commands/runs-show.js');
      setCode(await runsShow(runId, opts));
    });
  runs
    .command('cancel')
    .description('cancel a run through its owner; a run of another process is asked to stop and waited for')
    .argument('<run_id>')
    .option('--wait <seconds>', 'how long to wait for the owner to stop the run (default 10)', nonNegativeNumber)
    .option('--json', 'print JSON')
    .action(async (runId: string, opts: { wait?: number; json?: boolean }) => {
      const { runsCancel } = await import('./commands/runs-cancel.js');
      setCode(await runsCancel(runId, opts));
    });
  runs
    .command('follow')
    .description('follow an eval run (its id) until every case has ended; Ctrl-C stops following, not the run')
    .argument('<run>', 'the eval run id `eval run` printed')
    .option('-q, --quiet', 'print only the final counts')
    .action(async (run: string, opts: { quiet?: boolean }) => {
      const { runsFollow } = await import('./commands/runs-follow.js');
      setCode(await runsFollow(run, opts));
    });
  runs
    .command('gc')
    .description('mark FAILED every unfinished run whose owning process is gone, and list them')
    .option(
      '--older-than <duration>',
      'also prune the step state (instances, journals) of runs finished before then: 30d, 12h, 90m',
      parseDuration,
    )
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean; olderThan?: number }) => {
      const { runsGc } = await import('./commands/runs-gc.js');
      setCode(await runsGc(opts));
    });

  root
    .command('worker')
    .description('execute the cases of a queue runner ([runner] kind = "queue") until SIGTERM, which drains')
    .option('--concurrency <n>', 'cases at once in this process (default [runner.config] concurrency)', positiveInt)
    .option('--pool <name>', 'the pool (queue) to serve (default [runner.config] pool)')
    .option(
      '--drain-timeout <seconds>',
      'after SIGTERM, how long running cases may finish before going back to the queue',
      nonNegativeNumber,
    )
    .action(async (opts: { concurrency?: number; pool?: string; drainTimeout?: number }) => {
      const { worker } = await import('./commands/worker.js');
      setCode(await worker(opts));
    });

  root
    .command('serve')
    .description('serve the explorer: watch, inspect, compare, start and cancel runs in a browser')
    .option('--port <n>', 'port (default 4173; 0 picks a free one)', nonNegativeInt)
    .option('--host <host>', 'address to bind (default 127.0.0.1); any other needs --token')
    .option('--token <token>', 'required from every client (default: $PROCTOR_SERVE_TOKEN)')
    .option('--open', 'open the explorer in a browser')
    .action(async (opts: { port?: number; host?: string; token?: string; open?: boolean }) => {
      const { serveCommand } = await import('./commands/serve.js');
      setCode(await serveCommand(opts));
    });
  return root;
};

/**
 * What the CLI prints and exits with for an error no command handled: bad input and a store that stayed out of
 * reach are for the user to act on, without a stack; anything else is a bug, reported as one.
 */
export const failureReport = (error: unknown): { text: string; code: number } => {
  if (error instanceof InputError) return { text: `error: ${error.format()}\n`, code: exitCodes.badInput };
  if (error instanceof StoreLostError) {
    return {
      text:
        `error: ${error.message}\n  fix: once the store answers again, \`proctor runs gc\` marks the runs this ` +
        'command left unfinished FAILED; `proctor eval run --resume <run>` continues an eval run\n',
      code: exitCodes.failed,
    };
  }
  const info = packageInfo();
  const tracker = typeof info.bugs === 'string' ? info.bugs : info.bugs?.url;
  return {
    text:
      `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` +
      `this is a bug in Proctor ${info.version}, not in your input: please report it ` +
      `${tracker ? `at ${tracker}` : 'to the Proctor maintainers'} with the command you ran and this output\n`,
    code: exitCodes.failed,
  };
};

let outputGuarded = false;

/**
 * A reader that stops early (`proctor results show RUN | head -1`) closes the pipe: what is left to print has
 * no reader, which is no failure of the command, so it finishes and exits with its own code. Unheard, the
 * EPIPE would kill the process with a stack. The same holds for stderr piped with it (`2>&1 | head`).
 */
const ignoreClosedOutput = (): void => {
  if (outputGuarded) return;
  outputGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
      throw error;
    });
  }
};

/** Runs the CLI and resolves to its exit code (DESIGN.md: 0 passed, 1 failed, 2 bad input, 130/143 signals). */
export const main = async (argv: readonly string[]): Promise<number> => {
  ignoreClosedOutput();
  let code: number = exitCodes.ok;
  try {
    await program((c) => {
      code = c;
    }).parseAsync([...argv]);
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.badInput;
    }
    const report = failureReport(error);
    process.stderr.write(report.text);
    return report.code;
  }
};
