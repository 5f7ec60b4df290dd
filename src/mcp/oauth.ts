/**
 * The SDK's transport does discovery, registration, PKCE, step-up and refresh; this supplies the
 * provider and puts every token and client secret it sees on the agent's redaction list.
 */
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { auth as runAuth, type AddClientAuthentication, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { jwtBearerRequest, JWT_BEARER_GRANT, type McpIdToken } from './crossAppAccess.ts';
import { defined } from '../core/defined.ts';

export interface McpTokenStore {
  load(server: string): OAuthTokens | undefined | Promise<OAuthTokens | undefined>;
  save(server: string, tokens: OAuthTokens): void | Promise<void>;
}

/** Resolves to the `code` the redirect carried. */
export type McpAuthorize = (authorizationUrl: URL) => Promise<string>;

const fn = <T>() => z.custom<T>((value) => typeof value === 'function', 'must be a function');

const optionsSchema = z.strictObject({
  grant: z.enum(['authorization_code', 'client_credentials', 'cross_app_access']).optional(),
  /** Without one the client registers itself (or uses `clientMetadataUrl`). */
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  privateKey: z.string().min(1).optional(),
  algorithm: z.string().min(1).optional(),
  clientMetadataUrl: z.url({ protocol: /^https?$/ }).optional(),
  clientName: z.string().min(1).optional(),
  /** Used when the server names none (in `WWW-Authenticate` or its metadata). */
  scope: z.string().min(1).optional(),
  redirectUrl: z.url().optional(),
  authorize: fn<McpAuthorize>().optional(),
  idToken: z.union([z.string().min(1), fn<() => string | Promise<string>>()]).optional(),
  idpTokenEndpoint: z.url({ protocol: /^https?$/ }).optional(),
  idpClientId: z.string().min(1).optional(),
  idpClientSecret: z.string().min(1).optional(),
  tokenStore: z.custom<McpTokenStore>((value) => typeof value === 'object' && value !== null && typeof (value as McpTokenStore).load === 'function' && typeof (value as McpTokenStore).save === 'function', 'must have load() and save()').optional(),
});

export type McpOAuthOptions = z.infer<typeof optionsSchema>;
export type McpAuth = McpOAuthOptions | (OAuthClientProvider & { authorize?: McpAuthorize });

function isProvider(value: object): value is OAuthClientProvider {
  return typeof (value as OAuthClientProvider).tokens === 'function' && typeof (value as OAuthClientProvider).clientInformation === 'function';
}

/** Checked here so a bad `auth` fails at config time with what is wrong. */
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

export function authSecrets(auth: McpAuth | undefined): string[] {
  if (auth === undefined || isProvider(auth)) return [];
  const idToken: McpIdToken | undefined = auth.idToken;
  return [auth.clientSecret, auth.privateKey, auth.idpClientSecret, typeof idToken === 'string' ? idToken : undefined].filter((value): value is string => value !== undefined);
}

export interface McpOAuthSession {
  readonly provider: OAuthClientProvider;
  /** Taken: a second call says none. */
  pendingAuthorization(): URL | undefined;
  readonly authorize: McpAuthorize | undefined;
  /** Only when that needs no person; a failure leaves the old token to the usual refusal-then-sign-in path. */
  refreshIfDue(): Promise<void>;
}

function refreshAhead(lifetimeMs: number): number {
  return Math.min(60_000, lifetimeMs / 5);
}

function memoryStore(): McpTokenStore {
  const kept = new Map<string, OAuthTokens>();
  return { load: (server) => kept.get(server), save: (server, tokens) => void kept.set(server, tokens) };
}

/** Each token or registered client secret is handed to `onSecret` before anything can echo it. */
export function oauthSession(server: string, serverUrl: string, auth: McpAuth, onSecret: (secret: string) => void): McpOAuthSession {
  let pending: URL | undefined;
  const take = (): URL | undefined => {
    const url = pending;
    pending = undefined;
    return url;
  };
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
        // No more early tries for this token: each request would otherwise wait on a failing server first.
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
    // Tokens and a client secret the provider kept from an earlier session are secrets too.
    wrapped.tokens = async () => {
      const tokens = await auth.tokens();
      if (tokens !== undefined) noteTokens(tokens);
      return tokens;
    };
    wrapped.clientInformation = async () => {
      const info = await auth.clientInformation();
      if (info !== undefined) noteClient(info);
      return info;
    };
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
  // A store may not delete, so tokens the server rejected for good stay unused until new ones are saved.
  let dropped = false;
  const metadata: OAuthClientMetadata = {
    client_name: options.clientName ?? 'actorloop',
    redirect_uris: options.redirectUrl === undefined ? [] : [options.redirectUrl],
    grant_types: crossApp ? [JWT_BEARER_GRANT] : machine ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
    response_types: machine ? [] : ['code'],
    ...(options.privateKey === undefined ? {} : { token_endpoint_auth_method: 'private_key_jwt' }),
    ...defined({ scope: options.scope }),
  };
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return machine ? undefined : options.redirectUrl ?? 'http://localhost/actorloop/oauth/callback';
    },
    get clientMetadata() {
      return metadata;
    },
    ...defined({ clientMetadataUrl: options.clientMetadataUrl }),
    clientInformation: () => (options.clientId === undefined ? registered : { client_id: options.clientId, ...defined({ client_secret: options.clientSecret }) }),
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
            prepareTokenRequest: (scope?: string) => new URLSearchParams({ grant_type: 'client_credentials', ...defined({ scope }) }),
          }
        : {}),
  };
  if (options.privateKey !== undefined && options.clientId !== undefined && options.algorithm !== undefined) {
    const jwtAuth: AddClientAuthentication = createPrivateKeyJwtAuth({ issuer: options.clientId, subject: options.clientId, privateKey: options.privateKey, alg: options.algorithm });
    provider.addClientAuthentication = jwtAuth;
  }
  return { provider, pendingAuthorization: take, authorize: options.authorize, refreshIfDue: refresher(provider) };
}
