import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { authSecrets, mcpAuthSchema } from './oauth.ts';

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

const resourcesMode = z.union([z.literal('tools'), z.literal('context'), z.literal(false)]).optional();
const samplingMode = z.union([z.boolean(), z.strictObject({ maxTokens: z.number().int().positive() })]).optional();
// Checked here as answerRoots will read them: otherwise a remote host or an encoded "/" fails the connection at the first run.
const localFolderUrl = z.url({ protocol: /^file$/ }).refine((url) => {
  try {
    fileURLToPath(url);
    return true;
  } catch {
    return false;
  }
}, 'must be the file:/// URL of a local folder (no host, no encoded "/")');
const rootsList = z.array(localFolderUrl).optional();
// What the user vouches for: a server's annotations are its own claims, believed only when told to.
const trust = {
  trustAnnotations: z.boolean().optional(),
  readOnlyTools: z.array(z.string().min(1)).optional(),
  idempotentTools: z.array(z.string().min(1)).optional(),
};

const stdioConfig = z.strictObject({
  name: z.string().regex(SERVER_NAME),
  resources: resourcesMode,
  sampling: samplingMode,
  roots: rootsList,
  ...trust,
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
  ...trust,
  // fetch refuses such a URL, and its error would quote the password where the redactor does not know it.
  url: z.url({ protocol: /^https?$/ }).refine((url) => {
    const parsed = new URL(url);
    return parsed.username === '' && parsed.password === '';
  }, 'must not carry user:password@; send credentials in headers (e.g. Authorization) or auth'),
  headers: z.record(z.string(), z.string()).optional(),
  auth: mcpAuthSchema.optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
});

export type McpStdioServerConfig = z.infer<typeof stdioConfig>;
export type McpHttpServerConfig = z.infer<typeof httpConfig>;
/** Values of `env` and `headers` are treated as secrets. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export function checkMcpServerConfig(config: unknown): McpServerConfig {
  const isHttp = config !== null && typeof config === 'object' && 'url' in config;
  const parsed = (isHttp ? httpConfig : stdioConfig).safeParse(config);
  if (parsed.success) return parsed.data;
  const name = config !== null && typeof config === 'object' && 'name' in config ? String((config as { name: unknown }).name) : '(unnamed)';
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
  throw new ConfigurationError(
    `MCP server config "${name}" is invalid (${issues}). Use { name, command, args?, env?, cwd? } for stdio or { name, url, headers?, auth? } for HTTP, either with resources?: 'tools' | 'context' | false, sampling?: boolean | { maxTokens }, roots?: ['file:///…'], trustAnnotations?: boolean, readOnlyTools?: [glob], idempotentTools?: [glob]; name is 1–32 of A-Z, a-z, 0-9, "_", "-".`,
  );
}

/** A tool may echo just the credential of a `Bearer <token>` value, so it is a secret on its own too. */
export function mcpSecrets(config: McpServerConfig): string[] {
  const values = 'url' in config ? Object.values(config.headers ?? {}) : Object.values(config.env ?? {});
  const credentials = values.flatMap((value) => /^[A-Za-z]+\s+(\S{4,})$/.exec(value)?.[1] ?? []);
  return [...values, ...credentials, ...('url' in config ? authSecrets(config.auth) : [])].filter((value) => value.length >= 4);
}
