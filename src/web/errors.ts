/**
 * What a web handler answers a request it cannot serve with: a 4xx status and one line saying
 * what to send instead. The run the request named is never touched by it.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/** The HTTP statuses a refused request gets. */
export type WebRequestStatus = 400 | 404 | 405 | 409 | 410 | 413 | 415;

/**
 * A request to a web handler was refused (malformed body, unknown run, a decision for calls that
 * are not waiting). `status` is the HTTP status it is answered with.
 */
export class WebRequestError extends ActorloopError {
  declare readonly code: 'web_request';

  constructor(
    readonly status: WebRequestStatus,
    message: string,
    options: ActorloopErrorOptions = {},
  ) {
    super('web_request', message, options);
  }
}
