/**
 * OAuth 2.1 for MCP servers over HTTP, on the SDK's `OAuthClientProvider` interface: the SDK's
 * transport does discovery, registration, PKCE, step-up and refresh; this file supplies the
 * provider (a user's own, or a built-in one for the usual grants) and keeps every token and
 * client secret it sees in the agent's redaction list. A token that says when it expires is
 * refreshed shortly before then, when that needs no person, rather than only after a 401.
 */
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { auth as runAuth, type AddClientAuthentication, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { jwtBearerRequest, JWT_BEARER_GRANT, type McpIdToken } from './crossAppAccess.ts';

/** Where a server's tokens are kept between connections (memory by default). */
export interface McpTokenStore {
  load(server: string): OAuthTokens | undefined | Promise<OAuthTokens | undefined>;
  save(server: string, tokens: OAuthTokens): void | Promise<void>;
}

/** Takes the authorization URL to a person (a browser) and resolves to the `code` the redirect carried. */
export type McpAuthorize = (authorizationUrl: URL) => Promise<string>;

const fn = <T>() => z.custom<T>((value) => typeof value === 'function', 'must be a function');

const optionsSchema = z.strictObject({
  /**
   * `authorization_code` (a person signs in; the default), `client_credentials` (machine to
   * machine) or `cross_app_access` (the user's ID token from their organisation's identity
   * provider, exchanged there for an identity assertion grant, then for an access token).
   */
  grant: z.enum(['authorization_code', 'client_credentials', 'cross_app_access']).optional(),
  /** A pre-registered client; without one the client registers itself (or uses `clientMetadataUrl`). */
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  /** For `client_credentials` with `private_key_jwt`: a PEM private key and its algorithm (e.g. ES256). */
  privateKey: z.string().min(1).optional(),
  algorithm: z.string().min(1).optional(),
  /** An HTTPS URL of this client's metadata document, used where the server accepts one instead of registration. */
  clientMetadataUrl: z.url({ protocol: /^https?$/ }).optional(),
  clientName: z.string().min(1).optional(),
  /** Scopes to ask for when the server names none (in `WWW-Authenticate` or its metadata). */
  scope: z.string().min(1).optional(),
  redirectUrl: z.url().optional(),
  authorize: fn<McpAuthorize>().optional(),
  /** For `cross_app_access`: the user's ID token (or a function returning a fresh one), and the identity provider's token endpoint and client. */
  idToken: z.union([z.string().min(1), fn<() => string | Promise<string>>()]).optional(),
  idpTokenEndpoint: z.url({ protocol: /^https?$/ }).optional(),
  idpClientId: z.string().min(1).optional(),
  idpClientSecret: z.string().min(1).optional(),
  tokenStore: z.custom<McpTokenStore>((value) => typeof value === 'object' && value !== null && typeof (value as McpTokenStore).load === 'function' && typeof (value as McpTokenStore).save === 'function', 'must have load() and save()').optional(),
});

/** Options of the built-in provider. */
export type McpOAuthOptions = z.infer<typeof optionsSchema>;
/** A server's `auth`: the built-in provider's options, or a provider of one's own (optionally with an `authorize` handler). */
export type McpAuth = McpOAuthOptions | (OAuthClientProvider & { authorize?: McpAuthorize });

function isProvider(value: object): value is OAuthClientProvider {
  return typeof (value as OAuthClientProvider).tokens === 'function' && typeof (value as OAuthClientProvider).clientInformation === 'function';
}

/** The `auth` config field: checked here so a bad one fails at config time with what is wrong. */
export const mcpAuthSchema = z.custom<McpAuth>((value) => typeof value === 'object' && value !== null, 'must be an OAuthClientProvider or built-in OAuth options').superRefine((value, context) => {
  if (isProvider(value)) return;
  const parsed = optionsSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return;
  }
  const options = parsed.data;
  if (options.grant === 'cross_app_access') {
    for (const field of ['clientId', 'idToken', 'idpTokenEndpoint', 'idpClientId'] as const) {
      if (options[field] === undefined) context.addIssue({ code: 'custom', message: `cross_app_access needs ${field} (with clientId, idToken, idpTokenEndpoint, idpClientId; clientSecret and idpClientSecret where the servers want them)`, path: [field] });
    }
  } else if (options.grant === 'client_credentials') {
    if (options.clientId === undefined) context.addIssue({ code: 'custom', message: "client_credentials needs clientId (with clientSecret or privateKey)", path: ['clientId'] });
    else if (options.clientSecret === undefined && options.privateKey === undefined) context.addIssue({ code: 'custom', message: 'client_credentials needs clientSecret or privateKey', path: ['clientSecret'] });
  } else if (options.authorize !== undefined && options.redirectUrl === undefined) {
    context.addIssue({ code: 'custom', message: 'an authorize handler needs the redirectUrl it listens on', path: ['redirectUrl'] });
  }
  if (options.privateKey !== undefined && options.algorithm === undefined) context.addIssue({ code: 'custom', message: 'privateKey needs its algorithm (e.g. ES256)', path: ['algorithm'] });
});

/** The secrets a config's `auth` holds itself (a client secret, a private key). */
export function authSecrets(auth: McpAuth | undefined): string[] {
  if (auth === undefined || isProvider(auth)) return [];
  const idToken: McpIdToken | undefined = auth.idToken;
  return [auth.clientSecret, auth.privateKey, auth.idpClientSecret, typeof idToken === 'string' ? idToken : undefined].filter((value): value is string => value !== undefined);
}

/** A session's provider plus what the connection needs to finish a browser sign-in. */
export interface McpOAuthSession {
  readonly provider: OAuthClientProvider;
  /** The authorization URL the last `auth()` asked to send a person to, if it did (taken: a second call says none). */
  pendingAuthorization(): URL | undefined;
  readonly authorize: McpAuthorize | undefined;
  /**
   * Refresh the access token when it expires soon and that needs no person (a refresh token, or a
   * grant without one); a failure leaves the old token to the usual refusal-then-sign-in path.
   */
  refreshIfDue(): Promise<void>;
}

/** How long before its expiry a token is refreshed: a fifth of its lifetime, at most a minute. */
function refreshAhead(lifetimeMs: number): number {
  return Math.min(60_000, lifetimeMs / 5);
}

function memoryStore(): McpTokenStore {
  const kept = new Map<string, OAuthTokens>();
  return { load: (server) => kept.get(server), save: (server, tokens) => void kept.set(server, tokens) };
}

/**
 * The provider a connection uses: the built-in one for options, the user's own wrapped. Either
 * way each token or registered client secret is handed to `onSecret` before anything can echo it.
 */
export function oauthSession(server: string, serverUrl: string, auth: McpAuth, onSecret: (secret: string) => void): McpOAuthSession {
  let pending: URL | undefined;
  const take = (): URL | undefined => {
    const url = pending;
    pending = undefined;
    return url;
  };
  // When the last token saved falls due for refresh, and whether getting another needs no person.
  let due: number | undefined;
  let silent = false;
  // While set, a sign-in the refresh would start is not taken to the user's own provider (no browser opens).
  let quiet = false;
  let refreshing: Promise<void> | undefined;
  const noteSaved = (tokens: OAuthTokens, machine: boolean): void => {
    const lifetimeMs = tokens.expires_in === undefined ? undefined : tokens.expires_in * 1000;
    due = lifetimeMs === undefined || !(lifetimeMs > 0) ? undefined : Date.now() + lifetimeMs - refreshAhead(lifetimeMs);
    silent = machine || tokens.refresh_token !== undefined;
  };
  const refresher = (provider: OAuthClientProvider) => (): Promise<void> => {
    if (due === undefined || !silent || Date.now() < due) return Promise.resolve();
    refreshing ??= (async () => {
      quiet = true;
      try {
        await runAuth(provider, { serverUrl });
      } catch {
        // The request goes out with the token it has; a refusal then takes the usual path. No more
        // early tries for this token: each request would otherwise wait on a failing server first.
        due = undefined;
      } finally {
        quiet = false;
        pending = undefined;
        refreshing = undefined;
      }
    })();
    return refreshing;
  };
  const noteTokens = (tokens: OAuthTokens): void => {
    onSecret(tokens.access_token);
    if (tokens.refresh_token !== undefined) onSecret(tokens.refresh_token);
    if (tokens.id_token !== undefined) onSecret(tokens.id_token);
  };
  const noteClient = (info: OAuthClientInformationMixed): void => {
    if (info.client_secret !== undefined) onSecret(info.client_secret);
  };
  if (isProvider(auth)) {
    // Delegating by prototype keeps the user's optional methods (and `this`) as they wrote them.
    const wrapped: OAuthClientProvider = Object.create(auth) as OAuthClientProvider;
    wrapped.saveTokens = async (tokens) => {
      noteTokens(tokens);
      noteSaved(tokens, auth.redirectUrl === undefined);
      await auth.saveTokens(tokens);
    };
    wrapped.redirectToAuthorization = async (url) => {
      pending = url;
      if (!quiet) await auth.redirectToAuthorization(url);
    };
    wrapped.saveClientInformation = async (info) => {
      noteClient(info);
      await auth.saveClientInformation?.(info);
    };
    return { provider: wrapped, pendingAuthorization: take, authorize: auth.authorize, refreshIfDue: refresher(wrapped) };
  }
  const options = optionsSchema.parse(auth);
  const store = options.tokenStore ?? memoryStore();
  const crossApp = options.grant === 'cross_app_access';
  const machine = options.grant === 'client_credentials' || crossApp;
  let discovery: OAuthDiscoveryState | undefined;
  let registered: OAuthClientInformationMixed | undefined;
  let verifier: string | undefined;
  // Tokens the server rejected for good stay unused until new ones are saved (a store may not delete).
  let dropped = false;
  const metadata: OAuthClientMetadata = {
    client_name: options.clientName ?? 'actorloop',
    redirect_uris: options.redirectUrl === undefined ? [] : [options.redirectUrl],
    grant_types: crossApp ? [JWT_BEARER_GRANT] : machine ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
    response_types: machine ? [] : ['code'],
    ...(options.privateKey === undefined ? {} : { token_endpoint_auth_method: 'private_key_jwt' }),
    ...(options.scope === undefined ? {} : { scope: options.scope }),
  };
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return machine ? undefined : options.redirectUrl ?? 'http://localhost/actorloop/oauth/callback';
    },
    get clientMetadata() {
      return metadata;
    },
    ...(options.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: options.clientMetadataUrl }),
    clientInformation: () => (options.clientId === undefined ? registered : { client_id: options.clientId, ...(options.clientSecret === undefined ? {} : { client_secret: options.clientSecret }) }),
    saveClientInformation: (info) => {
      noteClient(info);
      registered = info;
    },
    tokens: async () => {
      if (dropped) return undefined;
      const tokens = await store.load(server);
      if (tokens !== undefined) noteTokens(tokens);
      return tokens;
    },
    saveTokens: async (tokens) => {
      noteTokens(tokens);
      noteSaved(tokens, machine);
      dropped = false;
      await store.save(server, tokens);
    },
    redirectToAuthorization: (url) => {
      pending = url;
    },
    saveCodeVerifier: (value) => {
      verifier = value;
    },
    codeVerifier: () => {
      if (verifier === undefined) throw new Error('no PKCE code verifier was saved for this sign-in');
      return verifier;
    },
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'client') registered = undefined;
      if (scope === 'all' || scope === 'verifier') verifier = undefined;
      if (scope === 'all' || scope === 'tokens') dropped = true;
    },
    saveDiscoveryState: (state) => {
      discovery = state;
    },
    ...(crossApp
      ? {
          prepareTokenRequest: (scope?: string) => {
            const { idToken, idpTokenEndpoint, idpClientId, idpClientSecret } = options;
            if (idToken === undefined || idpTokenEndpoint === undefined || idpClientId === undefined) throw new Error('cross_app_access options were not checked');
            return jwtBearerRequest(server, { idToken, idpTokenEndpoint, idpClientId, idpClientSecret, scope: options.scope }, discovery, serverUrl, scope, onSecret);
          },
        }
      : machine
        ? {
            prepareTokenRequest: (scope?: string) => new URLSearchParams({ grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) }),
          }
        : {}),
  };
  if (options.privateKey !== undefined && options.clientId !== undefined && options.algorithm !== undefined) {
    const jwtAuth: AddClientAuthentication = createPrivateKeyJwtAuth({ issuer: options.clientId, subject: options.clientId, privateKey: options.privateKey, alg: options.algorithm });
    provider.addClientAuthentication = jwtAuth;
  }
  return { provider, pendingAuthorization: take, authorize: options.authorize, refreshIfDue: refresher(provider) };
}
