import { exitCodes } from './exit-codes.js';

export interface StopSignals {
  received: 'SIGINT' | 'SIGTERM' | undefined;
  dispose(): void;
}

/**
 * The first SIGINT or SIGTERM starts a graceful stop (cancel in-flight work, write what is finished);
 * a second one exits at once with the same code.
 */
export const onStopSignals = (stop: () => Promise<void>): StopSignals => {
  const state: StopSignals = {
    received: undefined,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    const received = signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
    if (state.received) process.exit(signalExitCode(received));
    state.received = received;
    process.stderr.write(`\n${signal}: canceling in-flight cases (again to exit now)\n`);
    void stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
};

/** The exit code of a command stopped by `signal` (DESIGN.md: 130 SIGINT, 143 SIGTERM). */
export const signalExitCode = (signal: 'SIGINT' | 'SIGTERM'): number =>
  signal === 'SIGINT' ? exitCodes.sigint : exitCodes.sigterm;

/** Stop signals of a command that follows a runner: `stopped` resolves once the runner has stopped. */
export interface RunnerStopSignals extends StopSignals {
  stopped: Promise<void>;
  /** Resolves `stopped`, for a command that stopped the runner itself. */
  markStopped(): void;
}

/** The first SIGINT or SIGTERM stops `runner`; following the store ends at its next reading. */
export const stopRunnerOnSignals = (runner: { stop(): Promise<void> }): RunnerStopSignals => {
  let markStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    markStopped = resolve;
  });
  const signals = onStopSignals(async () => {
    await runner.stop();
    markStopped();
  });
  // The same object: onStopSignals keeps setting `received` on it.
  return Object.assign(signals, { stopped, markStopped });
};
