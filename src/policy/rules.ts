/** Deny rules are checked first, so a deny always wins; a confirm wins over an allow. */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { ALLOW } from './decision.ts';
import { findMatchingGlob, globToRegExp } from './glob.ts';
import type { GateDecision, PolicyGate, ProposedAction } from './types.ts';

const Globs = z.array(z.string());

/** Unknown keys are refused, so a typo cannot silently allow. */
export const RulesConfig = z
  .object({
    /** Tool-name globs; when given, a tool matching none of them is denied. */
    allow: Globs.optional(),
    deny: Globs.optional(),
    /** Tool-name globs whose calls wait for a human to approve them (when not denied). */
    confirm: Globs.optional(),
    permissions: z
      .object({
        /** When given, every permission a tool declares must match one of these globs. */
        allow: Globs.optional(),
        deny: Globs.optional(),
        confirm: Globs.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type RulesConfig = z.infer<typeof RulesConfig>;

const ADVICE = ' Do not call it again; use another tool or continue without it.';
const ASKS = ' A human must approve the call before it runs.';

/**
 * Checks `deny`, `permissions.deny`, `allow`, `permissions.allow` in order (the first failing denies), then the confirm
 * lists. A tool with no permissions passes `permissions.allow`.
 */
export function rulesGate(config: RulesConfig): PolicyGate {
  const parsed = RulesConfig.safeParse(config);
  if (!parsed.success) {
    throw new ConfigurationError(
      `Invalid rules gate configuration: ${z.prettifyError(parsed.error)}. ` +
        'Expected { allow?: string[]; deny?: string[]; confirm?: string[]; permissions?: { allow?: string[]; deny?: string[]; confirm?: string[] } }.',
    );
  }
  const { allow, deny = [], confirm = [], permissions = {} } = parsed.data;
  const { allow: permissionAllow, deny: permissionDeny = [], confirm: permissionConfirm = [] } = permissions;
  // Compile once here, so configuration mistakes surface at creation and evaluation only matches.
  for (const pattern of [...(allow ?? []), ...deny, ...confirm, ...(permissionAllow ?? []), ...permissionDeny, ...permissionConfirm]) globToRegExp(pattern);

  return {
    name: 'rules',
    evaluate(action: ProposedAction): GateDecision {
      const tool = JSON.stringify(action.tool);
      const denied = findMatchingGlob(action.tool, deny);
      if (denied !== undefined) {
        return { kind: 'deny', reason: `Tool ${tool} is denied by policy rule deny: ${JSON.stringify(denied)}.${ADVICE}` };
      }
      for (const permission of action.permissions) {
        const rule = findMatchingGlob(permission, permissionDeny);
        if (rule !== undefined) {
          return {
            kind: 'deny',
            reason: `Tool ${tool} needs permission ${JSON.stringify(permission)}, denied by policy rule permissions.deny: ${JSON.stringify(rule)}.${ADVICE}`,
          };
        }
      }
      if (allow !== undefined && findMatchingGlob(action.tool, allow) === undefined) {
        return { kind: 'deny', reason: `Tool ${tool} is not on the allow list (allow: ${list(allow)}).${ADVICE}` };
      }
      if (permissionAllow !== undefined) {
        for (const permission of action.permissions) {
          if (findMatchingGlob(permission, permissionAllow) === undefined) {
            return {
              kind: 'deny',
              reason: `Tool ${tool} needs permission ${JSON.stringify(permission)}, which no policy rule in permissions.allow grants (permissions.allow: ${list(permissionAllow)}).${ADVICE}`,
            };
          }
        }
      }
      const asked = findMatchingGlob(action.tool, confirm);
      if (asked !== undefined) {
        return { kind: 'confirm', reason: `Tool ${tool} needs a human's approval by policy rule confirm: ${JSON.stringify(asked)}.${ASKS}` };
      }
      for (const permission of action.permissions) {
        const rule = findMatchingGlob(permission, permissionConfirm);
        if (rule !== undefined) {
          return {
            kind: 'confirm',
            reason: `Tool ${tool} needs permission ${JSON.stringify(permission)}, which policy rule permissions.confirm: ${JSON.stringify(rule)} leaves to a human.${ASKS}`,
          };
        }
      }
      return ALLOW;
    },
  };
}

function list(patterns: readonly string[]): string {
  return patterns.length === 0 ? 'empty' : patterns.map((pattern) => JSON.stringify(pattern)).join(', ');
}
