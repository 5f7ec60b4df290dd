/** Shared helpers for the skills tests: real skill folders in a temp folder, and real tool calls. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AssistantMessage, ToolMessage } from '../../src/core/messages.ts';
import { createExecutor } from '../../src/executor/executor.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Tool } from '../../src/tools/types.ts';

/** A fresh temp folder; `cleanup` removes it. */
export function tempFolder(): { readonly root: string; write(relative: string, text: string): string; cleanup(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'actorloop-skills-'));
  return {
    root,
    write(relative, text) {
      const file = path.join(root, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A skill file's text. */
export function skillText(name: string, description: string, body: string, extra = ''): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}\n`;
}

let callCounter = 0;

/**
 * One round of the model calling `tool` with `args` through the real executor, as the
 * conversation records it: the assistant's call and the tool message (built like the agent does).
 */
export async function callThroughExecutor(tool: Tool, args: unknown): Promise<[AssistantMessage, ToolMessage]> {
  const id = `call_${++callCounter}`;
  const call = { id, name: tool.name, arguments: JSON.stringify(args) };
  const executor = createExecutor({ tools: createToolRegistry([tool]) });
  const [outcome] = await executor.run([{ index: 0, call, arguments: args }], {
    runId: 'run_test',
    agentId: 'agent_test',
    iteration: 0,
    signal: new AbortController().signal,
    emit: () => undefined,
  });
  if (outcome === undefined) throw new Error('the executor returned no outcome');
  const message: ToolMessage = { role: 'tool', toolCallId: id, name: tool.name, content: outcome.content, ...(outcome.isError ? { isError: true } : {}) };
  return [{ role: 'assistant', content: null, toolCalls: [call] }, message];
}
