/**
 * The react-N scenario every contender runs: a stateless scripted model that proposes N−1 calls
 * of an instant `echo` tool, one per step, then answers "done".
 *
 * Stateless: the model reads the step from the last tool result in the conversation it is given
 * (the tool echoes its `i` argument), so one model serves sequential and concurrent runs alike,
 * in-process or behind HTTP, and every framework pays the same model cost. Each framework gets
 * the script through its own custom-model interface; the counters let the harness check that
 * every run made exactly N model calls and N−1 tool calls.
 */

/** The final answer every run ends with; runners check it so no contender can skip work. */
export const ANSWER = 'done';
export const TASK = 'Count with the echo tool.';
export const TOOL_NAME = 'echo';
export const TOOL_DESCRIPTION = 'Echo the number back.';

/** One run of react-N: `n` model calls, each after `delayMs` (0: answered in a microtask). */
export interface ReactConfig {
  readonly n: number;
  readonly delayMs: number;
}

/** What the script says at one step: call echo with `i`, or answer. */
export type ScriptedStep = { readonly call: number } | { readonly answer: string };

/**
 * The step after the conversation's last tool result (`undefined`: no tool result yet).
 *
 * @example
 * ```ts
 * nextStep(undefined, 10); // { call: 0 }
 * nextStep('8', 10);       // { answer: 'done' }
 * ```
 */
export function nextStep(lastToolResult: string | undefined, n: number): ScriptedStep {
  const i = lastToolResult === undefined ? 0 : echoed(lastToolResult) + 1;
  return i < n - 1 ? { call: i } : { answer: ANSWER };
}

/** The integer a tool result carries, however the framework serialised it (`3`, `"3"`, `{"i":3}`). */
function echoed(result: string): number {
  const match = /-?\d+/.exec(result);
  if (match === null) throw new Error(`react-N: the tool result ${JSON.stringify(result)} carries no number.`);
  return Number(match[0]);
}

/** How many model and tool calls a contender's runs made, to check against runs × N and runs × (N−1). */
export interface CallCounts {
  model: number;
  tool: number;
}

export const newCounts = (): CallCounts => ({ model: 0, tool: 0 });

/**
 * Throw unless `counts` are exactly what `runs` runs of react-`n` make.
 *
 * @example
 * ```ts
 * verifyCounts('(a)', { model: 20, tool: 18 }, 2, 10); // passes
 * ```
 */
export function verifyCounts(who: string, counts: CallCounts, runs: number, n: number): void {
  if (counts.model !== runs * n || counts.tool !== runs * (n - 1)) {
    throw new Error(`${who}: ${runs} runs of react-${n} should make ${runs * n} model and ${runs * (n - 1)} tool calls, made ${counts.model} and ${counts.tool}.`);
  }
}

/** Fail loudly when a contender returned something other than the scripted answer. */
export function expectAnswer(text: unknown, who: string): void {
  if (text !== ANSWER) throw new Error(`${who}: expected the answer ${JSON.stringify(ANSWER)}, got ${JSON.stringify(text)}.`);
}

/** N of an HTTP target's model name `react-N`: the bench server reads it the same way. */
export const reactN = (target: { readonly model: string }): number => Number(target.model.replace('react-', ''));

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
