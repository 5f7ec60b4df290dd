/**
 * Applied once, after every tool source is merged and before the registry sees them: a dropped
 * tool is simply unknown to the run. Order: include, exclude, `requireVerified`, then `maxTools`.
 */
import { ConfigurationError } from '../core/errors.ts';
import { findMatchingGlob } from '../policy/glob.ts';

export interface ToolProfile {
  /** Globs (`*` any run, `?` one character, anchored). Empty or absent: every tool passes. */
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly requireVerified?: boolean;
  /** Keep at most this many of what is left, in the given order. */
  readonly maxTools?: number;
}

export interface ProfiledTool {
  readonly name: string;
  readonly description: string;
  readonly verified?: boolean;
}

export type ToolDropReason = 'not_included' | 'excluded' | 'unverified' | 'over_limit';

export interface DroppedTool {
  readonly name: string;
  readonly reason: ToolDropReason;
  readonly pattern?: string;
}

export interface ToolProfileReport<TTool> {
  readonly kept: TTool[];
  readonly dropped: DroppedTool[];
  /** Usually a typo. */
  readonly unmatchedPatterns: string[];
}

export function explainToolProfile<TTool extends ProfiledTool>(tools: readonly TTool[], profile: ToolProfile = {}): ToolProfileReport<TTool> {
  check(profile);
  const include = profile.include ?? [];
  const exclude = profile.exclude ?? [];
  const used = new Set<string>();
  const kept: TTool[] = [];
  const dropped: DroppedTool[] = [];
  for (const tool of tools) {
    // Every glob is tried on every tool, so `unmatchedPatterns` reports only true typos.
    const included = include.length === 0 ? true : findMatchingGlob(tool.name, include);
    const excluded = exclude.length === 0 ? undefined : findMatchingGlob(tool.name, exclude);
    if (typeof included === 'string') used.add(included);
    if (excluded !== undefined) used.add(excluded);
    let reason: ToolDropReason | undefined;
    if (included === undefined) reason = 'not_included';
    else if (excluded !== undefined) reason = 'excluded';
    else if (profile.requireVerified === true && !isVerified(tool)) reason = 'unverified';
    else if (profile.maxTools !== undefined && kept.length >= profile.maxTools) reason = 'over_limit';
    if (reason === undefined) kept.push(tool);
    else dropped.push(reason === 'excluded' && excluded !== undefined ? { name: tool.name, reason, pattern: excluded } : { name: tool.name, reason });
  }
  const unmatchedPatterns = [...new Set([...include, ...exclude])].filter((glob) => !used.has(glob));
  return { kept, dropped, unmatchedPatterns };
}

export function applyToolProfile<TTool extends ProfiledTool>(tools: readonly TTool[], profile: ToolProfile = {}): TTool[] {
  return explainToolProfile(tools, profile).kept;
}

/** A set flag decides: an MCP tool is `verified: false`, and its server writes its description. */
function isVerified(tool: ProfiledTool): boolean {
  if (typeof tool.verified === 'boolean') return tool.verified;
  return typeof tool.description === 'string' && tool.description.includes('[verified]');
}

function check(profile: ToolProfile): void {
  const fail = (problem: string): never => {
    throw new ConfigurationError(`Tool profile: ${problem}`);
  };
  if (typeof profile !== 'object' || profile === null) fail('the profile must be an object { include?, exclude?, requireVerified?, maxTools? }.');
  for (const key of ['include', 'exclude'] as const) {
    const globs: unknown = profile[key];
    if (globs === undefined) continue;
    if (!Array.isArray(globs) || !globs.every((g) => typeof g === 'string')) {
      fail(`\`${key}\` must be an array of glob strings such as ["web_*", "file_?"].`);
    }
  }
  const { maxTools, requireVerified } = profile;
  if (maxTools !== undefined && !(Number.isInteger(maxTools) && maxTools >= 0)) {
    fail(`maxTools must be a whole number ≥ 0 (got ${String(maxTools)}).`);
  }
  if (requireVerified !== undefined && typeof requireVerified !== 'boolean') fail('requireVerified must be true or false.');
}
