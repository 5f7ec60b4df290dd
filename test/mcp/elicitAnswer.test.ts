/** A person's answer to an MCP server's form, checked against the form with its defaults filled in. */
import { describe, expect, it } from 'vitest';
import { checkElicitAnswer } from '../../src/mcp/elicitation.ts';

const form = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

describe('an answer to a server’s form', () => {
  it('gets the defaults of the fields it leaves out, fields named like Object members included', () => {
    const schema = form({ constructor: { type: 'string', default: 'Ada' }, toString: { type: 'string', default: 'plain' }, size: { type: 'number', default: 3 } }, ['constructor', 'toString']);
    const checked = checkElicitAnswer(schema, {});
    expect(checked).toEqual({ content: { constructor: 'Ada', toString: 'plain', size: 3 } });
    expect(Object.keys((checked as { content: Record<string, unknown> }).content)).toEqual(['constructor', 'toString', 'size']);
  });

  it('keeps what the person answered over a default', () => {
    expect(checkElicitAnswer(form({ constructor: { type: 'string', default: 'Ada' } }), { constructor: 'Bob' })).toEqual({ content: { constructor: 'Bob' } });
  });

  it('refuses a "constructor" holding "prototype" or a "__proto__" key, which would leave the run it is recorded in unreadable', () => {
    const schema = form({ name: { type: 'string' } });
    expect(checkElicitAnswer(schema, JSON.parse('{"name":"x","constructor":{"prototype":{"p":1}}}'))).toEqual({ problems: expect.stringMatching(/^constructor: .*rename/) });
    expect(checkElicitAnswer(schema, JSON.parse('{"name":"x","__proto__":{"p":1}}'))).toEqual({ problems: expect.stringMatching(/^__proto__: /) });
  });

  it('says what is wrong with an answer that does not fit the form', () => {
    expect(checkElicitAnswer(form({ size: { type: 'number' } }, ['size']), { size: 'big' })).toEqual({ problems: expect.stringMatching(/^size: /) });
    expect(checkElicitAnswer(form({}), ['not', 'an', 'object'])).toEqual({ problems: expect.stringMatching(/JSON object/) });
  });
});
