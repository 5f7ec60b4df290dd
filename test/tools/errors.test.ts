import { describe, expect, it } from 'vitest';
import { ActorloopError } from '../../src/core/errors.ts';
import { ToolError } from '../../src/tools/errors.ts';

function roundTrip(error: ActorloopError): unknown {
  return JSON.parse(JSON.stringify(error));
}

describe('tool errors', () => {
  it('ToolError (tool_not_found) blames the model and bounds the model-chosen name', () => {
    const error = ToolError.notFound({ toolName: `__proto__${'x'.repeat(1000)}\uD800`, toolCallId: 'call_1' }, { runId: 'run_1' });
    expect(error).toBeInstanceOf(ActorloopError);
    expect(error).toMatchObject({ name: 'ToolError', code: 'tool_not_found', blame: 'model', toolCallId: 'call_1', runId: 'run_1' });
    expect(error.toolName.length).toBe(256);
    expect(error.message.length).toBeLessThan(200);
    expect(roundTrip(error)).toMatchObject({ code: 'tool_not_found', toolCallId: 'call_1', runId: 'run_1' });
  });

  it('ToolError (invalid_tool_arguments) carries the issues and the reason', () => {
    const issues = [{ path: 'a', message: 'Invalid input: expected number, received string', code: 'invalid_type' }];
    const error = ToolError.invalidArguments({ toolName: 'add', toolCallId: 'c1', reason: 'invalid_arguments', issues });
    expect(error).toMatchObject({ code: 'invalid_tool_arguments', blame: 'model', reason: 'invalid_arguments', issues });
    expect(error.message).toContain('a: Invalid input: expected number');
    expect(roundTrip(error)).toEqual({
      name: 'ToolError',
      code: 'invalid_tool_arguments',
      blame: 'model',
      message: error.message,
      toolName: 'add',
      toolCallId: 'c1',
      reason: 'invalid_arguments',
      issues,
    });
    expect(ToolError.invalidArguments({ toolName: 'add', toolCallId: 'c2', reason: 'invalid_json' }).issues).toEqual([]);
  });

  it('ToolError (tool_failed) blames the tool and keeps the cause out of its JSON', () => {
    const cause = new Error('secret internals');
    const error = ToolError.failed({ toolName: 'fetch', toolCallId: 'c1', message: 'TypeError: fetch failed' }, { cause });
    expect(error).toMatchObject({ code: 'tool_failed', blame: 'tool', toolName: 'fetch', toolCallId: 'c1', message: 'TypeError: fetch failed' });
    expect(error.cause).toBe(cause);
    expect(JSON.stringify(error)).not.toContain('secret internals');
  });

  it('ToolError (tool_timeout) says what to do and carries the timeout', () => {
    const error = ToolError.timeout({ toolName: 'slow', toolCallId: 'c1', timeoutMs: 30_000 });
    expect(error).toMatchObject({ code: 'tool_timeout', blame: 'tool', toolName: 'slow', timeoutMs: 30_000 });
    expect(error.message).toMatch(/30000 ms.*AbortSignal/);
    expect(roundTrip(error)).toMatchObject({ timeoutMs: 30_000, toolCallId: 'c1' });
  });
});
