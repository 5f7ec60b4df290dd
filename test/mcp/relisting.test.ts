/**
 * A tool list change on one MCP server (the fixture server's `grow`, which sends
 * notifications/tools/list_changed) makes only that server list its tools again; the other is not asked.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { controlled } from './support.ts';

const SLOW = 60_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const lists = (file: string): number => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => line === 'tools/list').length;
  } catch {
    return 0;
  }
};

describe("one MCP server's list_changed", () => {
  it(
    'lists that server again and leaves the other alone',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'actorloop-relist-'));
      dirs.push(dir);
      const logA = join(dir, 'a.log');
      const logB = join(dir, 'b.log');
      const model = scriptedModel([
        { toolCalls: [{ name: 'a_grow', arguments: {} }] },
        { toolCalls: [{ name: 'a_extra_1', arguments: {} }] },
        { toolCalls: [{ name: 'b_pid', arguments: {} }] },
        { text: 'done' },
      ]);
      // Taint off: the calls after the first MCP result would otherwise wait for a human.
      const agent = createAgent({ model, mcpServers: [controlled('a', undefined, { LIST_LOG: logA }), controlled('b', undefined, { LIST_LOG: logB })], policy: { taint: false } });
      try {
        await agent.run('grow a, call the new tool, then ask b');
      } finally {
        await agent.close();
      }
      // The new tool was offered after the change, so a was listed again.
      expect(model.calls[1]?.tools?.map((tool) => tool.name)).toContain('a_extra_1');
      expect(lists(logA)).toBe(2);
      expect(lists(logB)).toBe(1);
    },
    SLOW,
  );
});
