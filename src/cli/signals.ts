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
    const code = signal === 'SIGINT' ? exitCodes.sigint : exitCodes.sigterm;
    if (state.received) process.exit(code);
    state.received = signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
    process.stderr.write(`\n${signal}: canceling in-flight cases (again to exit now)\n`);
    void stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
};
