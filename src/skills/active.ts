/** The active skill is read from the conversation itself, so a run resumed after a crash narrows its tools exactly as before. */
import { z } from 'zod';
import type { Message, ToolCall } from '../core/messages.ts';
import { findMatchingGlob } from '../policy/glob.ts';
import type { Skill } from './skill.ts';
import { SKILL_TOOL, skillNameOfResult } from './tool.ts';

const SkillArguments = z.object({ name: z.string() });

/** Error results are passed over; a result whose marker was masked is still recognised by the call's arguments. */
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

/** `skill` itself always stays, so the model can switch; no `tools` allows every name, `tools: []` only `skill`. */
export function allowedTools(skill: Skill | undefined, toolNames: readonly string[]): string[] {
  const patterns = skill?.tools;
  if (patterns === undefined) return [...toolNames];
  return toolNames.filter((name) => name === SKILL_TOOL || findMatchingGlob(name, patterns) !== undefined);
}
