/**
 * An MCP server's config: where it is (a command for stdio, a URL for HTTP), what the client
 * offers it (resources, sampling, roots, OAuth), checked once so a bad one fails with what is wrong.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { authSecrets, mcpAuthSchema } from './oauth.ts';

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** How an agent offers a server's resources: as tools the model calls, as context the user names, or not at all. */
const resourcesMode = z.union([z.literal('tools'), z.literal('context'), z.literal(false)]).optional();
/** Whether the server may ask the agent's model for completions, and how many output tokens each may take. */
const samplingMode = z.union([z.boolean(), z.strictObject({ maxTokens: z.number().int().positive() })]).optional();
/** The directories a server is told it may work in. */
const rootsList = z.array(z.url({ protocol: /^file$/ })).optional();

const stdioConfig = z.strictObject({
  name: z.string().regex(SERVER_NAME),
  resources: resourcesMode,
  sampling: samplingMode,
  roots: rootsList,
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
});
const httpConfig = z.strictObject({
  name: z.string().regex(SERVER_NAME),
  resources: resourcesMode,
  sampling: samplingMode,
  roots: rootsList,
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  /** OAuth 2.1: built-in provider options or an `OAuthClientProvider` of one's own. */
  auth: mcpAuthSchema.optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
});

/** A server started as a child process, speaking MCP on its stdin and stdout. */
export type McpStdioServerConfig = z.infer<typeof stdioConfig>;
/** A server reached over streamable HTTP (or SSE). */
export type McpHttpServerConfig = z.infer<typeof httpConfig>;
/**
 * Where an MCP server is. `name` (1–32 of `[A-Za-z0-9_-]`) prefixes its tools' names; values of
 * `env` and `headers` are treated as secrets. `resources` (default `false`): `'tools'` adds
 * `<name>__list_resources` and `<name>__read_resource` to its tools; `'context'` reads the
 * resource URIs a task names into the run's context before the first model call. `sampling`
 * (default off): `true` or `{ maxTokens }` lets the server ask the agent's model for completions.
 * `roots` (default none): `file://` URIs the server gets when it asks for the client's roots.
 *
 * @example
 * ```ts
 * const files: McpServerConfig = { name: 'files', command: 'npx', args: ['@modelcontextprotocol/server-filesystem', root] };
 * const remote: McpServerConfig = { name: 'search', url: 'https://mcp.example.com/mcp', headers: { authorization: `Bearer ${token}` } };
 * ```
 */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;


/**
 * Check a server config; a bad one is a `ConfigurationError` saying what is wrong.
 *
 * @example
 * ```ts
 * checkMcpServerConfig({ name: 'x', command: 'node', args: ['server.js'] });
 * ```
 */
export function checkMcpServerConfig(config: unknown): McpServerConfig {
  const isHttp = config !== null && typeof config === 'object' && 'url' in config;
  const parsed = (isHttp ? httpConfig : stdioConfig).safeParse(config);
  if (parsed.success) return parsed.data;
  const name = config !== null && typeof config === 'object' && 'name' in config ? String((config as { name: unknown }).name) : '(unnamed)';
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
  throw new ConfigurationError(
    `MCP server config "${name}" is invalid (${issues}). Use { name, command, args?, env?, cwd? } for stdio or { name, url, headers?, auth? } for HTTP, either with resources?: 'tools' | 'context' | false, sampling?: boolean | { maxTokens }, roots?: ['file:///…']; name is 1–32 of A-Z, a-z, 0-9, "_", "-".`,
  );
}

/**
 * The secret values of a config, for redaction: env and header values, and the credential of an
 * `Authorization`-style value (`Bearer <token>`) on its own, since a tool may echo just that.
 *
 * @example
 * ```ts
 * mcpSecrets({ name: 'x', url: 'https://h/mcp', headers: { authorization: 'Bearer t0ken' } }); // ['Bearer t0ken', 't0ken']
 * ```
 */
export function mcpSecrets(config: McpServerConfig): string[] {
  const values = 'url' in config ? Object.values(config.headers ?? {}) : Object.values(config.env ?? {});
  const credentials = values.flatMap((value) => /^[A-Za-z]+\s+(\S{4,})$/.exec(value)?.[1] ?? []);
  return [...values, ...credentials, ...('url' in config ? authSecrets(config.auth) : [])].filter((value) => value.length >= 4);
}
