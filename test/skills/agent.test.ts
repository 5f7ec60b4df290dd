/**
 * Skills in an agent, as a user meets them: real skill files loaded with `loadSkills`, given to
 * `createAgent({ memory: { skills } })`, a scripted model whose requests show what it was offered.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import type { Message } from '../../src/core/messages.ts';
import { loadSkills } from '../../src/skills/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { skillText, tempFolder } from './support.ts';

const folders: ReturnType<typeof tempFolder>[] = [];
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
  for (const folder of folders.splice(0)) folder.cleanup();
  vi.restoreAllMocks();
});

function tool(name: string, ran: string[]) {
  return defineTool({ name, description: `The ${name} tool`, input: z.object({}), execute: () => (ran.push(name), `${name} done`) });
}

async function releaseSkills(extra = '') {
  const folder = tempFolder();
  folders.push(folder);
  folder.write('release.md', skillText('release', 'Cut a release', '1. Run git_tag.\n2. Run publish.', 'tools: [git_*, publish]\n'));
  folder.write('review/SKILL.md', skillText('review', 'Review a pull request', 'Read the diff.'));
  if (extra !== '') folder.write('broken.md', extra);
  return loadSkills({ projectDir: folder.root, userDir: `${folder.root}/no-such-folder` });
}

const offered = (request: { tools?: readonly { name: string }[] } | undefined) => (request?.tools ?? []).map((spec) => spec.name).sort();
const toolContents = (messages: readonly Message[]) => messages.filter((m) => m.role === 'tool').map((m) => m.content);

describe('skills in an agent', () => {
  it('lists the skills in the system prompt and loads one with the skill tool', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'skill', arguments: { name: 'release' } }] }, { text: 'ok' }]);
    const agent = createAgent({ model, system: 'You ship software.', tools: [tool('git_tag', []), tool('shell', [])], memory: { skills: await releaseSkills() } });
    agents.push(agent);
    const result = await agent.run('Cut v1.2');
    const system = model.calls[0]?.messages[0];
    expect(system?.role).toBe('system');
    expect(system?.content).toMatch(/^You ship software\./);
    expect(system?.content).toContain('release');
    expect(system?.content).toContain('Review a pull request');
    expect(toolContents(result.messages)[0]).toBe('[SKILL release]\n1. Run git_tag.\n2. Run publish.');
  });

  it('while a skill that names tools is active, only those tools are offered, and a call to another is refused', async () => {
    const ran: string[] = [];
    const model = scriptedModel([
      { toolCalls: [{ name: 'skill', arguments: { name: 'release' } }] },
      { toolCalls: [{ name: 'shell', arguments: {} }, { name: 'git_tag', arguments: {} }] },
      { text: 'tagged' },
    ]);
    const agent = createAgent({ model, tools: [tool('git_tag', ran), tool('shell', ran), tool('publish', ran)], memory: { skills: await releaseSkills() } });
    agents.push(agent);
    const result = await agent.run('Cut v1.2');
    expect(offered(model.calls[0])).toEqual(['git_tag', 'publish', 'shell', 'skill']);
    expect(offered(model.calls[1])).toEqual(['git_tag', 'publish', 'skill']);
    expect(ran).toEqual(['git_tag']);
    expect(toolContents(result.messages)[1]).toContain('Tool "shell" is not available while the skill "release" is active');
  });

  it('a skill that names no tools leaves every tool offered', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'skill', arguments: { name: 'review' } }] }, { text: 'ok' }]);
    const agent = createAgent({ model, tools: [tool('git_tag', []), tool('shell', [])], memory: { skills: await releaseSkills() } });
    agents.push(agent);
    await agent.run('Review #7');
    expect(offered(model.calls[1])).toEqual(['git_tag', 'shell', 'skill']);
  });

  it('a malformed skill file is reported with its file and line, and the agent runs with the others', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((message: string) => void warnings.push(message));
    const skills = await releaseSkills('---\nname: broken\ndescription: [unclosed\n---\nbody\n');
    const model = scriptedModel([{ text: 'ok' }]);
    const agent = createAgent({ model, memory: { skills } });
    agents.push(agent);
    await agent.run('Hello');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/skill skipped: .*broken\.md:3: /);
    expect(model.calls[0]?.messages[0]?.content).toContain('release');
  });
});
