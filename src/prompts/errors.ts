/**
 * Typed errors of prompt templates. A template that does not parse is a `ConfigurationError`
 * at definition; a `PromptError` is what `render` throws.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';
import { defined } from '../core/defined.ts';

/** One variable that failed the prompt's schema: its path (`user.name`, `items[0]`) and why. */
export interface PromptVariableIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * `render` could not render a prompt; both are the caller's to fix, and `code` says which:
 * - `prompt_variables_invalid`: the values do not match the prompt's schema (a variable is
 *   missing or has the wrong type); `issues` names every offending path;
 * - `prompt_render_failed`: the template failed while rendering valid values, most often because
 *   it references a variable its schema does not declare (`variable` names it), or because it
 *   tried to include a file.
 *
 * @example
 * ```ts
 * PromptError.variables([{ path: 'name', message: 'Invalid input: expected string, received undefined' }]).message;
 * // 'Prompt variables are invalid: name (Invalid input: expected string, received undefined). Pass values that match the prompt's schema.'
 * ```
 */
export class PromptError extends ActorloopError {
  declare readonly code: CodesOf<'PromptError'>;
  /** For `prompt_variables_invalid`: every variable that failed (empty for `prompt_render_failed`). */
  readonly issues: readonly PromptVariableIssue[];
  /** For `prompt_render_failed`: the undefined variable the template referenced, when that was the failure. */
  readonly variable: string | undefined;

  /** `prompt_render_failed`, with `variable` when an undeclared variable was the failure. */
  constructor(message: string, options: ActorloopErrorOptions & { readonly variable?: string; readonly issues?: readonly PromptVariableIssue[] } = {}) {
    super(options.issues === undefined ? 'prompt_render_failed' : 'prompt_variables_invalid', message, options);
    this.issues = options.issues ?? [];
    this.variable = options.variable;
  }

  /** `prompt_variables_invalid`: the values failed the prompt's schema at these paths. */
  static variables(issues: readonly PromptVariableIssue[], options: ActorloopErrorOptions = {}): PromptError {
    const listed = issues.map((issue) => `${issue.path} (${issue.message})`).join('; ');
    return new PromptError(`Prompt variables are invalid: ${listed}. Pass values that match the prompt's schema.`, { ...options, issues });
  }

  override toJSON() {
    const json = super.toJSON();
    if (this.code === 'prompt_variables_invalid') return { ...json, issues: this.issues };
    return { ...json, ...defined({ variable: this.variable }) };
  }
}
