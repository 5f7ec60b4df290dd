/**
 * Typed errors of prompt templates. A template that does not parse is a `ConfigurationError`
 * at definition; these two are what `render` throws, both the caller's to fix.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/** One variable that failed the prompt's schema: its path (`user.name`, `items[0]`) and why. */
export interface PromptVariableIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * The values given to `render` do not match the prompt's schema: a variable is missing or has
 * the wrong type. The message names every offending path.
 *
 * @example
 * ```ts
 * new PromptVariablesError([{ path: 'name', message: 'Invalid input: expected string, received undefined' }]).message;
 * // 'Prompt variables are invalid: name (Invalid input: expected string, received undefined). Pass values that match the prompt's schema.'
 * ```
 */
export class PromptVariablesError extends ActorloopError {
  readonly code = 'prompt_variables_invalid' as const;
  readonly blame = 'user' as const;
  readonly issues: readonly PromptVariableIssue[];

  constructor(issues: readonly PromptVariableIssue[], options?: ActorloopErrorOptions) {
    const listed = issues.map((issue) => `${issue.path} (${issue.message})`).join('; ');
    super(`Prompt variables are invalid: ${listed}. Pass values that match the prompt's schema.`, options);
    this.issues = issues;
  }

  override toJSON() {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/**
 * The template failed while rendering valid values, most often because it references a variable
 * its schema does not declare (`variable` names it), or because it tried to include a file.
 *
 * @example
 * ```ts
 * new PromptRenderError('Prompt template references "nmae", which its schema does not declare …', { variable: 'nmae' }).variable; // 'nmae'
 * ```
 */
export class PromptRenderError extends ActorloopError {
  readonly code = 'prompt_render_failed' as const;
  readonly blame = 'user' as const;
  /** The undefined variable the template referenced, when that was the failure. */
  readonly variable: string | undefined;

  constructor(message: string, options: ActorloopErrorOptions & { readonly variable?: string } = {}) {
    super(message, options);
    this.variable = options.variable;
  }

  override toJSON() {
    return { ...super.toJSON(), ...(this.variable === undefined ? {} : { variable: this.variable }) };
  }
}
