/**
 * MCP tools as actorloop tools, without a server: names, name collisions and how results become
 * the text the model sees.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { mcpToolName, mcpTools, resultText } from '../../src/mcp/tools.ts';
import { TOOL_NAME_PATTERN } from '../../src/tools/defineTool.ts';

const schema = { type: 'object', properties: {} };

describe('MCP tool names', () => {
  it('are always valid tool names: allowed characters only, at most 64', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 32 }), fc.string({ minLength: 1, maxLength: 200 }), (server, tool) => {
        expect(mcpToolName(server, tool)).toMatch(TOOL_NAME_PATTERN);
      }),
    );
    expect(mcpToolName('files', 'read file.v2')).toBe('files_read_file_v2');
  });

  it('that collide after sanitising are a configuration error naming both', () => {
    const call = async () => ({ content: [] });
    expect(() => mcpTools('s', [{ name: 'a.b', inputSchema: schema }, { name: 'a b', inputSchema: schema }], call)).toThrow(ConfigurationError);
    expect(() => mcpTools('s', [{ name: 'a.b', inputSchema: schema }, { name: 'a b', inputSchema: schema }], call)).toThrow(/"a.b" and "a b"/);
  });
});

describe('MCP results as text', () => {
  it('joins text, gives embedded text resources in full, and summarises binary content by type and size', () => {
    const text = resultText({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', mimeType: 'image/png', data: 'A'.repeat(4_000) },
        { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
        { type: 'resource', resource: { uri: 'file:///r.txt', mimeType: 'text/plain', text: 'twelve chars' } },
        { type: 'resource', resource: { uri: 'file:///r.bin', blob: 'AAAAAAAA' } },
        { type: 'resource_link', uri: 'file:///l', name: 'link' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'first',
      '[image: image/png, 2.9 KB]',
      '[audio: audio/wav, 3 B]',
      '[resource file:///r.txt]',
      'twelve chars',
      '[resource file:///r.bin]',
      '[binary resource: file:///r.bin, unknown type, 6 B]',
      '[resource link: file:///l (link)]',
    ]);
  });

  it('falls back to the structured content when there is no text', () => {
    expect(resultText({ content: [], structuredContent: { temperature: 21 } })).toBe('{"temperature":21}');
  });
});

describe('MCP tool annotations of a server the config trusts', () => {
  const call = async () => ({ content: [] });
  const permissionsOf = (annotations?: Record<string, boolean>) =>
    mcpTools('s', [{ name: 't', inputSchema: schema, ...(annotations === undefined ? {} : { annotations }) }], call, { trustAnnotations: true })[0]!.permissions;

  it("take MCP's defaults when missing: a tool that does not say it only reads or only adds may destroy", () => {
    expect(permissionsOf()).toContain('mcp:destructive');
    expect(permissionsOf({ idempotentHint: true })).toContain('mcp:destructive');
    expect(permissionsOf({ readOnlyHint: false })).toContain('mcp:destructive');
    expect(permissionsOf({ destructiveHint: true })).toContain('mcp:destructive');
  });

  it('drop the destructive permission only when the tool says it reads, or only adds', () => {
    expect(permissionsOf({ readOnlyHint: true, openWorldHint: false })).toEqual(['mcp', 'mcp:s', 'mcp:read']);
    expect(permissionsOf({ destructiveHint: false, openWorldHint: false })).toEqual(['mcp', 'mcp:s']);
    // A read-only tool's destructiveHint means nothing.
    expect(permissionsOf({ readOnlyHint: true, destructiveHint: true, openWorldHint: false })).toEqual(['mcp', 'mcp:s', 'mcp:read']);
  });
});
