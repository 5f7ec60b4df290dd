/** Every render validates its values first, so a missing or mistyped variable is an error naming it, not an empty hole in a prompt. */
import { Liquid, LiquidError, type Template } from 'liquidjs';
import { z } from 'zod';
import { ConfigurationError, describeError } from '../core/errors.ts';
import { PromptError } from './errors.ts';

export interface Prompt<TSchema extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>> {
  readonly template: string;
  readonly variables: TSchema;
  /** Validate `values`, then render: throws `PromptError` (`prompt_variables_invalid`) or `PromptError` (`prompt_render_failed`). */
  render(values: z.input<TSchema>): string;
}

const engine = new Liquid({
  strictVariables: true, // an undeclared variable throws instead of rendering as ''
  strictFilters: true, // an unknown filter fails at definition instead of being skipped
  ownPropertyOnly: true, // `x.constructor`, `x.__proto__` are undefined, never the prototype chain
  // An empty in-memory file map replaces the file system: include, render and layout find nothing.
  templates: Object.create(null) as Record<string, string>,
  // No outputEscape: prompts are plain text, `<` and `&` stay as they are.
});

/**
 * Values are inserted verbatim (`{{` in a value is text); Liquid runs no code, reads no files and sees only own properties.
 * @example
 * ```ts
 * definePrompt('Review {{ repo }}.', z.object({ repo: z.string() })).render({ repo: 'actorloop' }); // 'Review actorloop.'
 * ```
 */
export function definePrompt<TSchema extends z.ZodType<Record<string, unknown>>>(template: string, variables: TSchema): Prompt<TSchema> {
  if (typeof template !== 'string') throw new ConfigurationError('definePrompt needs the template as a string.');
  if (!(variables instanceof z.ZodType)) {
    throw new ConfigurationError('definePrompt needs a zod schema of the variables, e.g. z.object({ name: z.string() }).');
  }
  let parsed: Template[];
  try {
    parsed = engine.parse(template);
  } catch (error) {
    throw new ConfigurationError(`Prompt template does not parse${where(error)}: ${detail(error)}.`, { cause: error });
  }
  return {
    template,
    variables,
    render(values) {
      const result = variables.safeParse(values);
      if (!result.success) {
        throw PromptError.variables(result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })));
      }
      const scope = withDeclaredKeys(variables, result.data);
      try {
        return String(engine.renderSync(parsed, scope));
      } catch (error) {
        throw renderError(error);
      }
    },
  };
}

/** Absent optional keys become `null`: a declared key is no typo, so under strict variables `{% if note %}` should just be false. */
function withDeclaredKeys(schema: z.ZodType, data: Record<string, unknown>): Record<string, unknown> {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigurationError("A prompt's variables schema must produce an object, e.g. z.object({ name: z.string() }).");
  }
  if (!(schema instanceof z.ZodObject)) return data;
  const scope: Record<string, unknown> = { ...data };
  for (const key of Object.keys(schema.shape)) if (scope[key] === undefined) scope[key] = null;
  return scope;
}

function renderError(error: unknown): PromptError {
  const original = error instanceof LiquidError ? error.originalError : undefined;
  const variable = original !== undefined && 'variableName' in original ? original.variableName : undefined;
  if (typeof variable === 'string') {
    return new PromptError(
      `Prompt template references "${variable}"${where(error)}, which its variables schema does not declare. Add it to the schema or remove it from the template.`,
      { cause: error, variable },
    );
  }
  return new PromptError(`Prompt template failed to render${where(error)}: ${detail(error)}.`, { cause: error });
}

/** ` at line 2, column 5` for a Liquid error that knows its place, else ''. */
function where(error: unknown): string {
  if (!(error instanceof LiquidError)) return '';
  const [line, column] = error.token.getPosition();
  return line === undefined || column === undefined ? '' : ` at line ${line}, column ${column}`;
}

/** The error's own message, without the position Liquid appends to it. */
function detail(error: unknown): string {
  return describeError(error instanceof LiquidError ? (error.originalError ?? error) : error).replace(/, line:\d+, col:\d+$/, '');
}

/** `user.name`, `items[0]`, `labels["a b"]`; the whole value is `(variables)`. */
function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(variables)';
  return path
    .map((key, i) => {
      if (typeof key === 'number') return `[${key}]`;
      const name = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(name)) return i === 0 ? name : `.${name}`;
      return `[${JSON.stringify(name)}]`;
    })
    .join('');
}
