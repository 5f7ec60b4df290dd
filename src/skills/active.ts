/**
 * Which skill is active, read from the conversation itself: the latest successful `skill` tool
 * result. Nothing is kept beside the messages, so a run resumed after a crash narrows its tools
 * exactly as before. `allowedTools` turns the active skill into the tool names the model may
 * see and call.
 */
import { z } from 'zod';
import type { Message, ToolCall } from '../core/messages.ts';
import { findMatchingGlob } from '../policy/glob.ts';
import type { Skill } from './skill.ts';
import { SKILL_TOOL, skillNameOfResult } from './tool.ts';

const SkillArguments = z.object({ name: z.string() });

/**
 * The skill active in `messages`: the one loaded by the last `skill` call that succeeded (error
 * results, such as an unknown name, are passed over). Undefined when none was loaded, or when the
 * latest one is no longer among `skills`. A result whose marker was masked to fit the context
 * is still recognised by the call's arguments.
 *
 * @example
 * ```ts
 * const skill = activeSkill(messages, skills);
 * const visible = allowedTools(skill, registry.names());
 * ```
 */
export function activeSkill(messages: readonly Message[], skills: readonly Skill[]): Skill | undefined {
  const calls = new Map<string, ToolCall>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.set(call.id, call);
  }
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'tool' || message.isError === true) continue;
    const call = calls.get(message.toolCallId);
    if ((call?.name ?? message.name) !== SKILL_TOOL) continue;
    const name = skillNameOfResult(message.content) ?? nameInArguments(call);
    if (name === undefined) continue;
    return skills.find((skill) => skill.name === name);
  }
  return undefined;
}

function nameInArguments(call: ToolCall | undefined): string | undefined {
  if (call === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  const args = SkillArguments.safeParse(parsed);
  return args.success ? args.data.name.trim() : undefined;
}

/**
 * The tool names the model may see and call while `skill` is active: those matching its `tools`
 * globs, plus `skill` so it can switch to another skill. Every name when no skill is active or
 * the skill lists no `tools`; `tools: []` allows only `skill`. Keeps the order of `toolNames`
 * and never adds a name that is not in it.
 *
 * @example
 * ```ts
 * allowedTools({ ...release, tools: ['git_*'] }, ['git_tag', 'git_push', 'web_fetch', 'skill']);
 * // ['git_tag', 'git_push', 'skill']
 * ```
 */
export function allowedTools(skill: Skill | undefined, toolNames: readonly string[]): string[] {
  const patterns = skill?.tools;
  if (patterns === undefined) return [...toolNames];
  return toolNames.filter((name) => name === SKILL_TOOL || findMatchingGlob(name, patterns) !== undefined);
}
