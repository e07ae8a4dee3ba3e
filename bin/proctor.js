#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { main } from '../dist/proctor/main.js';

// V8 lets the old generation grow to up to 4× what survived the last full collection before collecting again.
// A run promotes each in-flight case's garbage, so a 100,000-case run climbed 4× its plan (~630 MB of heap, ~170
// MB live) before a collection; 1.5× bounds it near what the plan holds while it is planned (one synchronous
// stretch). A run then sizes each growth by what the heap keeps (src/cli/old-generation.ts), and `proctor worker`,
// which holds no plan, goes back to V8's own policy (src/cli/commands/worker.ts).
setFlagsFromString('--heap-growing-percent=50');
// V8 optimises a function on its compiler threads once it has run a budget of bytecode. Much of a command's code
// runs briefly (start-up, loading, planning, a case's first calls), where optimising costs more than it saves. At
// 4× Node 20's budget a 1,000-case run took ~20% less CPU; at 5,000 to 20,000 cases and for a 100,000-test plan the
// difference was within the noise, the compiler threads ~10% less busy (8×: less CPU at 5,000, more at 20,000).
// A queue worker's cases cost ~35% more CPU at Node's budget, and no less at 8× or 16× (bench/worker-cpu.ts).
// A run of fewer than 10,000 cases raises it to 16× from its start (src/cli/optimisation-budget.ts).
setFlagsFromString('--interrupt-budget=270336');

main(process.argv).then((code) => {
  process.exitCode = code;
});
