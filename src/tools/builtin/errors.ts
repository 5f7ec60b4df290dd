/**
 * Typed errors of the built-in tools. A tool that throws one of these hands the model an
 * observation saying what was refused, why, and what to do instead; the fields let code (and
 * tests) branch on the exact reason without parsing the message.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../../core/errors.ts';
import type { CodesOf } from '../../core/errorCodes.ts';
import { quoteUntrusted } from '../text.ts';
import { defined } from '../../core/defined.ts';

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

/** Why an allowed fetch still failed. */
export type WebFetchFailureReason = 'http_status' | 'timeout' | 'network';

interface WebFetchDetails {
  readonly url: string;
  readonly reason: UrlRefusalReason | WebFetchFailureReason;
  readonly detail: string;
  readonly hop?: number;
  readonly status?: number;
}

/**
 * `web_fetch` did not fetch a URL; `code` says which way:
 * - `url_refused`: a non-http(s) scheme, or a host that is (or resolves to) a loopback,
 *   private, link-local or otherwise internal address — checked on every hop; `hop` is 0 for
 *   the URL asked for, n for the n-th redirect target;
 * - `web_fetch_failed`: a permitted fetch failed: the server answered 4xx/5xx (`status`), the
 *   time cap ran out, or the connection failed.
 *
 * @example
 * ```ts
 * new WebFetchError('url_refused', { url: 'http://169.254.169.254/', reason: 'private_address', detail: '169.254.169.254 is link_local' }).blame; // 'model'
 * new WebFetchError('web_fetch_failed', { url: 'https://example.com/x', reason: 'http_status', detail: 'the server answered 404 Not Found', status: 404 }).status; // 404
 * ```
 */
export class WebFetchError extends ActorloopError {
  declare readonly code: CodesOf<'WebFetchError'>;
  readonly url: string;
  readonly reason: UrlRefusalReason | WebFetchFailureReason;
  readonly detail: string;
  /** For `url_refused`: 0 for the URL asked for, n for the n-th redirect target. */
  readonly hop: number;
  /** For `web_fetch_failed` with reason `http_status`: the status the server answered. */
  readonly status: number | undefined;

  constructor(
    code: 'url_refused',
    details: { readonly url: string; readonly reason: UrlRefusalReason; readonly detail: string; readonly hop?: number },
    options?: ActorloopErrorOptions,
  );
  constructor(
    code: 'web_fetch_failed',
    details: { readonly url: string; readonly reason: WebFetchFailureReason; readonly detail: string; readonly status?: number },
    options?: ActorloopErrorOptions,
  );
  constructor(code: CodesOf<'WebFetchError'>, details: WebFetchDetails, options?: ActorloopErrorOptions) {
    const hop = details.hop ?? 0;
    const url = quoteUntrusted(details.url, 200);
    super(
      code,
      code === 'url_refused'
        ? `web_fetch refused ${url}${hop === 0 ? '' : ` (redirect ${hop})`}: ${details.detail}`
        : `web_fetch could not fetch ${url}: ${details.detail}`,
      options,
    );
    this.url = details.url;
    this.reason = details.reason;
    this.detail = details.detail;
    this.hop = hop;
    this.status = details.status;
  }

  override toJSON() {
    const json = { ...super.toJSON(), url: this.url, reason: this.reason };
    if (this.code === 'url_refused') return { ...json, hop: this.hop };
    return { ...json, ...defined({ status: this.status }) };
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

/** Why an allowed path still could not be read. */
export type FileReadFailureReason = 'not_found' | 'not_a_file' | 'io';

/**
 * `file_read` did not read a path; `code` says which way:
 * - `path_refused`: the path would leave the configured root: `..` escapes, absolute paths
 *   elsewhere, `~`, NUL bytes, Windows drive/UNC forms, sibling folders sharing the root's
 *   prefix, or symlinks (of the file or of a folder on the way) pointing outside;
 * - `file_read_failed`: a path inside the root does not exist, is a folder or device, or the
 *   read failed.
 *
 * @example
 * ```ts
 * new FileReadError('path_refused', { path: '../etc/passwd', reason: 'traversal', detail: 'it climbs out of the root with ".."' }).reason; // 'traversal'
 * new FileReadError('file_read_failed', { path: 'src/missing.ts', reason: 'not_found', detail: 'no such file' }).blame; // 'tool'
 * ```
 */
export class FileReadError extends ActorloopError {
  declare readonly code: CodesOf<'FileReadError'>;
  readonly path: string;
  readonly reason: PathRefusalReason | FileReadFailureReason;

  constructor(code: 'path_refused', details: { readonly path: string; readonly reason: PathRefusalReason; readonly detail: string }, options?: ActorloopErrorOptions);
  constructor(code: 'file_read_failed', details: { readonly path: string; readonly reason: FileReadFailureReason; readonly detail: string }, options?: ActorloopErrorOptions);
  constructor(
    code: CodesOf<'FileReadError'>,
    details: { readonly path: string; readonly reason: PathRefusalReason | FileReadFailureReason; readonly detail: string },
    options?: ActorloopErrorOptions,
  ) {
    const path = quoteUntrusted(details.path, 200);
    super(
      code,
      code === 'path_refused'
        ? `file_read refused ${path}: ${details.detail}. Use a path inside the root folder, relative to it (e.g. "src/app.ts").`
        : `file_read could not read ${path}: ${details.detail}`,
      options,
    );
    this.path = details.path;
    this.reason = details.reason;
  }

  override toJSON() {
    return { ...super.toJSON(), path: this.path, reason: this.reason };
  }
}
