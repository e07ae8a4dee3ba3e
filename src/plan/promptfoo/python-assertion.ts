import { childProcess } from '../../node-modules.js';
import type { JsonObject } from '../../records.js';
import type { Path, Source } from '../source.js';
import { shellQuote } from './shell.js';

/**
 * Runs a promptfoo `python` assertion as a Proctor `script` grader: reads the case from stdin, calls the code
 * with promptfoo's `(output, context)` and prints the verdict as `{pass, score, reason}`. The code is an
 * expression, a body with `return`, or `file://check.py[:function]` (default `get_assert`).
 */
const runner = `
import importlib.util, json, sys
case = json.load(sys.stdin)
output, code = case["output"], sys.argv[1]
context = {"vars": case["vars"], "prompt": case["prompt"], "test": {"vars": case["vars"]}}
if code.startswith("file://"):
    path, _, name = code[len("file://"):].partition(":")
    spec = importlib.util.spec_from_file_location("assertion", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = getattr(module, name or "get_assert")(output, context)
elif "\\n" not in code.strip() and not code.strip().startswith("return"):
    result = eval(code, {"output": output, "context": context})
else:
    scope = {}
    exec("def _check(output, context):\\n" + "\\n".join("    " + l for l in code.splitlines()), scope)
    result = scope["_check"](output, context)
if isinstance(result, bool):
    result = {"pass": result, "score": 1 if result else 0}
elif isinstance(result, (int, float)):
    result = {"score": float(result)}
elif not isinstance(result, dict):
    result = {k: getattr(result, k) for k in ("pass_", "score", "reason") if hasattr(result, k)}
if "pass_" in result:
    result["pass"] = result.pop("pass_")
print(json.dumps({k: result[k] for k in ("pass", "score", "reason") if k in result}))
`;

let hasPython: boolean | undefined;

/** The `script` assertion that runs promptfoo python `code`; refused when this machine has no python3. */
export const pythonAssertion = (source: Source, at: Path, code: string): JsonObject => {
  hasPython ??= childProcess().spawnSync('python3', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!hasPython)
    throw source.fail(
      at,
      'a python assertion needs python3, which this machine lacks',
      'install python3, or write the check as a `javascript` assertion',
    );
  return { command: `python3 -c ${shellQuote(runner)} ${shellQuote(code)}` };
};
