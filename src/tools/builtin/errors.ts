/**
 * Typed errors of the built-in tools. A tool that throws one of these hands the model an
 * observation saying what was refused, why, and what to do instead; the fields let code (and
 * tests) branch on the exact reason without parsing the message.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../../core/errors.ts';
import { quoteUntrusted } from '../text.ts';

/** Why `web_fetch` refused a URL before (or instead of) connecting. */
export type UrlRefusalReason =
  | 'invalid_url'
  | 'scheme'
  | 'credentials'
  | 'trailing_dot'
  | 'localhost'
  | 'private_address'
  | 'unresolvable'
  | 'too_many_redirects';

/**
 * `web_fetch` refused a URL: a non-http(s) scheme, or a host that is (or resolves to) a
 * loopback, private, link-local or otherwise internal address — checked on every hop.
 *
 * @example
 * ```ts
 * new UrlRefusedError({ url: 'http://169.254.169.254/', reason: 'private_address', detail: '169.254.169.254 is link_local' }).code; // 'url_refused'
 * ```
 */
export class UrlRefusedError extends ActorloopError {
  readonly code = 'url_refused' as const;
  readonly blame = 'model' as const;
  readonly url: string;
  readonly reason: UrlRefusalReason;
  readonly detail: string;
  /** 0 for the URL asked for, n for the n-th redirect target. */
  readonly hop: number;

  constructor(
    details: { readonly url: string; readonly reason: UrlRefusalReason; readonly detail: string; readonly hop?: number },
    options?: ActorloopErrorOptions,
  ) {
    const hop = details.hop ?? 0;
    super(`web_fetch refused ${quoteUntrusted(details.url, 200)}${hop === 0 ? '' : ` (redirect ${hop})`}: ${details.detail}`, options);
    this.url = details.url;
    this.reason = details.reason;
    this.detail = details.detail;
    this.hop = hop;
  }

  override toJSON() {
    return { ...super.toJSON(), url: this.url, reason: this.reason, hop: this.hop };
  }
}

/** Why an allowed fetch still failed. */
export type WebFetchFailureReason = 'http_status' | 'timeout' | 'network';

/**
 * A permitted fetch failed: the server answered 4xx/5xx, the time cap ran out, or the
 * connection failed.
 *
 * @example
 * ```ts
 * new WebFetchError({ url: 'https://example.com/x', reason: 'http_status', detail: 'the server answered 404 Not Found', status: 404 }).status; // 404
 * ```
 */
export class WebFetchError extends ActorloopError {
  readonly code = 'web_fetch_failed' as const;
  readonly blame = 'tool' as const;
  readonly url: string;
  readonly reason: WebFetchFailureReason;
  readonly status: number | undefined;

  constructor(
    details: { readonly url: string; readonly reason: WebFetchFailureReason; readonly detail: string; readonly status?: number },
    options?: ActorloopErrorOptions,
  ) {
    super(`web_fetch could not fetch ${quoteUntrusted(details.url, 200)}: ${details.detail}`, options);
    this.url = details.url;
    this.reason = details.reason;
    this.status = details.status;
  }

  override toJSON() {
    return { ...super.toJSON(), url: this.url, reason: this.reason, ...(this.status === undefined ? {} : { status: this.status }) };
  }
}

/** Why `file_read` refused a path. */
export type PathRefusalReason =
  | 'empty'
  | 'nul_byte'
  | 'home'
  | 'windows_path'
  | 'traversal'
  | 'outside_root'
  | 'symlink_escape';

/**
 * `file_read` refused a path because it would leave the configured root: `..` escapes,
 * absolute paths elsewhere, `~`, NUL bytes, Windows drive/UNC forms, sibling folders sharing
 * the root's prefix, or symlinks (of the file or of a folder on the way) pointing outside.
 *
 * @example
 * ```ts
 * new PathRefusedError({ path: '../etc/passwd', reason: 'traversal', detail: 'it climbs out of the root with ".."' }).reason; // 'traversal'
 * ```
 */
export class PathRefusedError extends ActorloopError {
  readonly code = 'path_refused' as const;
  readonly blame = 'model' as const;
  readonly path: string;
  readonly reason: PathRefusalReason;

  constructor(details: { readonly path: string; readonly reason: PathRefusalReason; readonly detail: string }, options?: ActorloopErrorOptions) {
    super(
      `file_read refused ${quoteUntrusted(details.path, 200)}: ${details.detail}. Use a path inside the root folder, relative to it (e.g. "src/app.ts").`,
      options,
    );
    this.path = details.path;
    this.reason = details.reason;
  }

  override toJSON() {
    return { ...super.toJSON(), path: this.path, reason: this.reason };
  }
}

/** Why an allowed path still could not be read. */
export type FileReadFailureReason = 'not_found' | 'not_a_file' | 'io';

/**
 * A path inside the root could not be read: it does not exist, is a folder or device, or the
 * read failed.
 *
 * @example
 * ```ts
 * new FileReadError({ path: 'src/missing.ts', reason: 'not_found', detail: 'no such file' }).code; // 'file_read_failed'
 * ```
 */
export class FileReadError extends ActorloopError {
  readonly code = 'file_read_failed' as const;
  readonly blame = 'tool' as const;
  readonly path: string;
  readonly reason: FileReadFailureReason;

  constructor(details: { readonly path: string; readonly reason: FileReadFailureReason; readonly detail: string }, options?: ActorloopErrorOptions) {
    super(`file_read could not read ${quoteUntrusted(details.path, 200)}: ${details.detail}`, options);
    this.path = details.path;
    this.reason = details.reason;
  }

  override toJSON() {
    return { ...super.toJSON(), path: this.path, reason: this.reason };
  }
}
