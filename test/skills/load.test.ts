import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { loadSkills } from '../../src/skills/load.ts';
import { skillText, tempFolder } from './support.ts';

let temp: ReturnType<typeof tempFolder>;
let userDir: string;
let projectDir: string;

beforeEach(() => {
  temp = tempFolder();
  userDir = path.join(temp.root, 'home', '.actorloop', 'skills');
  projectDir = path.join(temp.root, 'project', '.actorloop', 'skills');
});
afterEach(() => temp.cleanup());

const user = (relative: string, text: string) => temp.write(path.join('home', '.actorloop', 'skills', relative), text);
const project = (relative: string, text: string) => temp.write(path.join('project', '.actorloop', 'skills', relative), text);

describe('loadSkills: finding skills', () => {
  it('loads *.md files and <sub>/SKILL.md from both folders, sorted by name, with body, tools and source', async () => {
    const release = project('release.md', skillText('release', 'Cut a release', '1. Update the changelog.\n2. Tag it.', 'tools: [git_*, read_file]\n'));
    const review = project(path.join('review', 'SKILL.md'), skillText('review', 'Review a pull request', 'Read the diff first.'));
    const notes = user('notes.md', skillText('notes', 'Take meeting notes', 'Write bullet points.'));

    const loaded = await loadSkills({ userDir, projectDir });

    expect(loaded.problems).toEqual([]);
    expect(loaded.overridden).toEqual([]);
    expect(loaded.skills).toEqual([
      { name: 'notes', description: 'Take meeting notes', body: 'Write bullet points.', file: notes, source: 'user' },
      { name: 'release', description: 'Cut a release', tools: ['git_*', 'read_file'], body: '1. Update the changelog.\n2. Tag it.', file: release, source: 'project' },
      { name: 'review', description: 'Review a pull request', body: 'Read the diff first.', file: review, source: 'project' },
    ]);
  });

  it('ignores files that are not .md, dot files, and sub-folders without SKILL.md', async () => {
    project('script.sh', 'echo hi');
    project('.draft.md', skillText('draft', 'Not ready', 'x'));
    project(path.join('helpers', 'notes.md'), skillText('nested', 'Too deep', 'x'));
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded).toEqual({ skills: [], problems: [], overridden: [] });
  });

  it('lets the project skill win over the user skill of the same name and lists the user file as overridden', async () => {
    const shadowed = user('deploy.md', skillText('deploy', 'Deploy (user version)', 'user body'));
    const winner = project(path.join('deploy', 'SKILL.md'), skillText('deploy', 'Deploy (project version)', 'project body'));
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills).toEqual([{ name: 'deploy', description: 'Deploy (project version)', body: 'project body', file: winner, source: 'project' }]);
    expect(loaded.overridden).toEqual([shadowed]);
    expect(loaded.problems).toEqual([]);
  });

  it('treats missing folders as having no skills, without problems', async () => {
    expect(await loadSkills({ userDir, projectDir })).toEqual({ skills: [], problems: [], overridden: [] });
  });

  it('loads a folder given as both user and project folder once, without overriding itself', async () => {
    project('a.md', skillText('a', 'A', 'body'));
    const loaded = await loadSkills({ userDir: projectDir, projectDir });
    expect(loaded.skills.map((s) => [s.name, s.source])).toEqual([['a', 'project']]);
    expect(loaded.overridden).toEqual([]);
  });

  it('reports a skills folder that is a file as a problem', async () => {
    const file = temp.write('not-a-folder', 'x');
    const loaded = await loadSkills({ userDir, projectDir: file });
    expect(loaded.problems).toEqual([{ file, message: expect.stringContaining('not a folder') }]);
  });

  it('rejects invalid options as a ConfigurationError', async () => {
    await expect(loadSkills({ projectDir: '' })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(loadSkills({ maxBytes: 0 })).rejects.toBeInstanceOf(ConfigurationError);
  });
});

describe('loadSkills: bad files are problems, and the others still load', () => {
  it('reports malformed YAML with the file and the file line of the error, and skips only that skill', async () => {
    // Line 1 is the opening ---; the bad mapping is on line 4.
    const broken = project('broken.md', '---\n# a comment\nname: broken\ndescription: one: two\n---\nbody\n');
    project('good.md', skillText('good', 'Still loads', 'body'));
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills.map((s) => s.name)).toEqual(['good']);
    expect(loaded.problems).toEqual([{ file: broken, line: 4, message: expect.stringMatching(/^invalid YAML in the front matter: .* \(line 4, column \d+\)$/) }]);
  });

  it('counts lines the same way in a file with Windows line endings', async () => {
    const broken = project('crlf.md', '---\r\nname: crlf\r\ndescription: fine\r\n  indented: wrong\r\n---\r\nbody\r\n');
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.problems).toEqual([{ file: broken, line: 4, message: expect.stringContaining('invalid YAML') }]);
  });

  it('reports a missing name and a missing description, naming the field to add', async () => {
    const noName = project('no-name.md', '---\ndescription: Has no name\n---\nbody\n');
    const noDescription = project('no-description.md', '---\nname: nodesc\n---\nbody\n');
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills).toEqual([]);
    expect(loaded.problems).toEqual([
      { file: noDescription, message: expect.stringMatching(/^description is missing/) },
      { file: noName, message: expect.stringMatching(/^name is missing/) },
    ]);
  });

  it('reports tools that is not a list, at the line of the tools key', async () => {
    const file = project('bad-tools.md', '---\nname: badtools\ndescription: Tools as text\ntools: read_file\n---\nbody\n');
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills).toEqual([]);
    expect(loaded.problems).toEqual([{ file, line: 4, message: expect.stringMatching(/^tools must be a list of tool names or globs/) }]);
  });

  it('reports an invalid name and a multi-line description', async () => {
    const spaced = project('a.md', '---\nname: two words\ndescription: x\n---\nbody\n');
    const multi = project('b.md', '---\nname: multi\ndescription: |\n  line one\n  line two\n---\nbody\n');
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.problems).toEqual([
      { file: spaced, line: 2, message: expect.stringMatching(/^name "two words" is not valid/) },
      { file: multi, line: 3, message: expect.stringMatching(/^description must be one line/) },
    ]);
  });

  it('reports a file without front matter, with an unclosed one, or without a body', async () => {
    const plain = project('plain.md', '# Just markdown\n');
    const unclosed = project('unclosed.md', '---\nname: open\ndescription: never closed\nbody\n');
    const empty = project('empty.md', '---\nname: empty\ndescription: No procedure\n---\n\n');
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills).toEqual([]);
    expect(loaded.problems).toEqual([
      { file: empty, line: 4, message: expect.stringContaining('no body') },
      { file: plain, line: 1, message: expect.stringMatching(/^no front matter/) },
      { file: unclosed, line: 1, message: expect.stringMatching(/^the front matter is not closed/) },
    ]);
  });

  it('keeps the first of two skills with one name in a folder and reports the second', async () => {
    const first = project('a.md', skillText('same', 'First', 'one'));
    const second = project(path.join('b', 'SKILL.md'), skillText('same', 'Second', 'two'));
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills.map((s) => s.file)).toEqual([first]);
    expect(loaded.problems).toEqual([{ file: second, message: expect.stringContaining(`already used by ${first}`) }]);
  });

  it('reports a file over maxBytes instead of loading it', async () => {
    const big = project('big.md', skillText('big', 'Large', 'x'.repeat(2_000)));
    project('small.md', skillText('small', 'Small', 'y'));
    const loaded = await loadSkills({ userDir, projectDir, maxBytes: 1_000 });
    expect(loaded.skills.map((s) => s.name)).toEqual(['small']);
    expect(loaded.problems).toEqual([{ file: big, message: expect.stringContaining('over the 1000-byte limit') }]);
  });

  it.skipIf(process.platform === 'win32')('refuses symlinks that leave the folder and follows ones that stay inside', async () => {
    const secret = temp.write(path.join('outside', 'secret.md'), skillText('secret', 'Private file', 'do not load'));
    temp.write(path.join('outside', 'SKILL.md'), skillText('secret-folder', 'Private folder', 'do not load'));
    // Inside the folder but not a skill by itself: a .txt in a folder without SKILL.md.
    const target = project(path.join('store', 'linked.txt'), skillText('inside', 'Linked inside', 'ok'));
    symlinkSync(secret, path.join(projectDir, 'escape.md'));
    symlinkSync(path.dirname(secret), path.join(projectDir, 'escape-folder'));
    symlinkSync(target, path.join(projectDir, 'linked.md'));
    const loaded = await loadSkills({ userDir, projectDir });
    expect(loaded.skills.map((s) => [s.name, s.file])).toEqual([['inside', path.join(projectDir, 'linked.md')]]);
    expect(loaded.problems).toEqual([
      { file: path.join(projectDir, 'escape-folder', 'SKILL.md'), message: expect.stringContaining('points outside the skills folder') },
      { file: path.join(projectDir, 'escape.md'), message: expect.stringContaining('points outside the skills folder') },
    ]);
  });
});
