import { exitCodes } from './exit-codes.js';

export interface StopSignals {
  received: 'SIGINT' | 'SIGTERM' | undefined;
  dispose(): void;
}

/**
 * The first SIGINT or SIGTERM starts a graceful stop (cancel in-flight work, write what is finished);
 * a second one exits at once with the same code. Commands abort their library call's signal in `stop`.
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
