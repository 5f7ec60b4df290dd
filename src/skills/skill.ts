/** `parseSkill` never throws for bad content: it returns a `SkillProblem` pointing at the line to fix. */
import matter from '@11ty/gray-matter';
import { z } from 'zod';
import { describeError } from '../core/errors.ts';
import { defined } from '../core/defined.ts';

/** Where a skill was loaded from; a project skill replaces a user skill of the same name. */
export type SkillSource = 'user' | 'project';

export interface Skill {
  /** Letters, digits, `-` and `_`: what the model passes to the `skill` tool. */
  readonly name: string;
  /** One line: when to use the skill. The model chooses skills by it. */
  readonly description: string;
  /** Tool names or globs (`*`, `?`) the model may use while the skill is active; absent means all. */
  readonly tools?: readonly string[];
  readonly body: string;
  readonly file: string;
  readonly source: SkillSource;
}

/** `line` is 1-based in the file (the opening `---` is line 1), set when the problem can be pinned to one. */
export interface SkillProblem {
  readonly file: string;
  readonly line?: number;
  readonly message: string;
}

/** The alphabet of tool names, so a name passes as an argument and shows in a marker without quoting. */
export const SKILL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const MAX_DESCRIPTION_CHARS = 1_024;
const MAX_TOOL_PATTERNS = 256;
const MAX_TOOL_PATTERN_CHARS = 128;
const NAME_RULE = 'letters, digits, "-" and "_" only, at most 64 characters';

function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : describeError(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** Other keys are allowed and ignored, so files written for other agent frameworks still load. */
export const SkillFrontMatter = z.object(
  {
    name: z
      .string({ error: (issue) => (issue.input === undefined ? `name is missing: add "name: my-skill" (${NAME_RULE})` : `name must be text (${NAME_RULE})`) })
      .regex(SKILL_NAME_PATTERN, { error: (issue) => `name ${shown(issue.input)} is not valid: use ${NAME_RULE}` }),
    description: z
      .string({
        error: (issue) =>
          issue.input === undefined ? 'description is missing: add "description: <when to use this skill>" on one line' : 'description must be text on one line',
      })
      .trim()
      .min(1, { error: 'description is empty: say in one line when to use this skill' })
      .max(MAX_DESCRIPTION_CHARS, { error: `description is too long: keep it to one line of at most ${MAX_DESCRIPTION_CHARS} characters` })
      .refine((text) => !/[\r\n]/.test(text), { error: 'description must be one line: put the details in the body' }),
    tools: z
      .array(
        z
          .string({ error: 'each tools entry must be a tool name or glob written as text' })
          .trim()
          .min(1, { error: 'a tools entry is empty' })
          .max(MAX_TOOL_PATTERN_CHARS, { error: `a tools entry is longer than ${MAX_TOOL_PATTERN_CHARS} characters` })
          .regex(/^\S+$/, { error: (issue) => `tools entry ${shown(issue.input)} contains a space: write one tool name or glob per entry` }),
        { error: 'tools must be a list of tool names or globs, e.g. tools: [read_file, "search_*"]' },
      )
      .max(MAX_TOOL_PATTERNS, { error: `tools lists more than ${MAX_TOOL_PATTERNS} entries: use globs such as "git_*"` })
      .optional(),
  },
  { error: 'the front matter must be YAML keys and values (name:, description:, tools:)' },
);
export type SkillFrontMatter = z.infer<typeof SkillFrontMatter>;

// What js-yaml (inside gray-matter) throws for a syntax error; `mark.line` is 0-based in the
// front-matter text, which starts with the rest of the opening `---` line.
const YamlError = z.object({
  reason: z.string(),
  mark: z.object({ line: z.number().int().nonnegative(), column: z.number().int().nonnegative() }),
});

const DELIMITER = /^---[ \t]*$/;

export type ParsedSkill = { readonly ok: true; readonly skill: Skill } | { readonly ok: false; readonly problem: SkillProblem };

export function parseSkill(text: string, file: string, source: SkillSource): ParsedSkill {
  const problem = (message: string, line?: number): ParsedSkill => ({ ok: false, problem: { file, ...defined({ line }), message } });
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!DELIMITER.test(lines[0] ?? '')) {
    return problem('no front matter: start the file with a "---" line, then "name:" and "description:" lines, then "---"', 1);
  }
  const close = lines.findIndex((line, index) => index > 0 && DELIMITER.test(line));
  if (close === -1) return problem('the front matter is not closed: add a "---" line after its last key', 1);

  let data: unknown;
  let content: string;
  try {
    // Passing options also keeps gray-matter from caching every text it parses, for good.
    const parsed = matter(text, { language: 'yaml' });
    data = parsed.data;
    content = parsed.content;
  } catch (error) {
    const yaml = YamlError.safeParse(error);
    if (!yaml.success) return problem(`the front matter could not be parsed: ${describeError(error)}`);
    const line = yaml.data.mark.line + 1;
    return problem(`invalid YAML in the front matter: ${yaml.data.reason} (line ${line}, column ${yaml.data.mark.column + 1})`, line);
  }

  const front = SkillFrontMatter.safeParse(data);
  if (!front.success) {
    const first = front.error.issues[0];
    const key = first?.path[0];
    const line = typeof key === 'string' ? keyLine(lines.slice(1, close), key) : undefined;
    return problem(front.error.issues.map((issue) => issue.message).join('; '), line);
  }
  // Leading blank lines go (gray-matter keeps them); indentation of the first line stays.
  const body = content.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
  if (body === '') return problem('the skill has no body: write the procedure below the closing "---"', close + 1);
  const { name, description, tools } = front.data;
  return { ok: true, skill: { name, description, ...defined({ tools }), body, file, source } };
}

/** The 1-based file line of a top-level `key:` in the front matter, which starts on line 2. */
function keyLine(frontLines: readonly string[], key: string): number | undefined {
  const index = frontLines.findIndex((line) => {
    const match = /^(["']?)([^"':\s]+)\1\s*:/.exec(line);
    return match?.[2] === key;
  });
  return index === -1 ? undefined : index + 2;
}
