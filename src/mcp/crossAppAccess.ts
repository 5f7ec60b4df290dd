/**
 * Cross-app access: the user's ID token is exchanged at their IdP for an ID-JAG (RFC 8693), which the
 * SDK then trades for an access token (RFC 7523). This makes the first request, inside `prepareTokenRequest`.
 */
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { z } from 'zod';
import { McpError } from './errors.ts';
import { defined } from '../core/defined.ts';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

/** A function, so a fresh token can be fetched for each sign-in. */
export type McpIdToken = string | (() => string | Promise<string>);

export interface CrossAppAccessOptions {
  readonly idToken: McpIdToken;
  readonly idpTokenEndpoint: string;
  readonly idpClientId: string;
  readonly idpClientSecret?: string | undefined;
  readonly scope?: string | undefined;
}

const exchanged = z.object({ access_token: z.string().min(1), issued_token_type: z.string().optional() });
const refused = z.object({ error: z.string(), error_description: z.string().optional() });

/** Every token it sees goes to `onSecret`. */
export async function jwtBearerRequest(
  server: string,
  options: CrossAppAccessOptions,
  discovery: OAuthDiscoveryState | undefined,
  serverUrl: string,
  scope: string | undefined,
  onSecret: (secret: string) => void,
): Promise<URLSearchParams> {
  if (discovery === undefined) throw McpError.authorizationRequired(server, 'cross-app access needs the authorization server the MCP server names, and discovery found none');
  const audience = discovery.authorizationServerMetadata?.issuer ?? discovery.authorizationServerUrl;
  const resource = discovery.resourceMetadata?.resource ?? serverUrl;
  const idToken = typeof options.idToken === 'string' ? options.idToken : await options.idToken();
  if (typeof idToken !== 'string' || idToken === '') throw McpError.authorizationRequired(server, 'the idToken function of its cross-app access returned no ID token');
  onSecret(idToken);
  const wanted = scope ?? options.scope;
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    requested_token_type: ID_JAG_TYPE,
    subject_token: idToken,
    subject_token_type: ID_TOKEN_TYPE,
    audience,
    resource,
    client_id: options.idpClientId,
    ...defined({ client_secret: options.idpClientSecret, scope: wanted }),
  });
  let response: Response;
  try {
    response = await fetch(options.idpTokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body });
  } catch (error) {
    throw McpError.authorizationRequired(server, `the identity provider's token endpoint ${options.idpTokenEndpoint} could not be reached (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  const answer: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const why = refused.safeParse(answer);
    const reason = why.success ? `${why.data.error}${why.data.error_description === undefined ? '' : `: ${why.data.error_description}`}` : `HTTP ${response.status}`;
    throw McpError.authorizationRequired(server, `the identity provider refused to exchange the ID token for an identity assertion grant (${reason}); check idToken, idpClientId and that the IdP trusts ${audience}`);
  }
  const grant = exchanged.safeParse(answer);
  if (!grant.success || (grant.data.issued_token_type !== undefined && grant.data.issued_token_type !== ID_JAG_TYPE)) {
    throw McpError.authorizationRequired(server, `the identity provider's token exchange answered without an identity assertion grant (issued_token_type ${JSON.stringify(grant.data?.issued_token_type)})`);
  }
  onSecret(grant.data.access_token);
  return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: grant.data.access_token, ...defined({ scope: wanted }) });
}
