#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { main } from '../dist/proctor/main.js';

// V8 lets the old generation grow to up to 4× what survived the last full collection before collecting again.
// A run promotes each in-flight case's garbage, so a 100,000-case run climbed 4× its plan (~630 MB of heap, ~170
// MB live) before a collection; 1.5× bounds it near what the plan holds (a few more full collections, ~1%).
setFlagsFromString('--heap-growing-percent=50');

main(process.argv).then((code) => {
  process.exitCode = code;
});
