// Declarations for the HTTP layer (sendFile, serveStatic), re-exported by
// lib/index.d.ts.

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import type { Stats } from 'node:fs'

/** Options shared by sendFile and serveStatic (names and defaults of send / serve-static). */
export interface FileResponseOptions {
  /** Send `Accept-Ranges: bytes` and honour a single `Range` (206 / 416). Default `true`. */
  acceptRanges?: boolean
  /** Send `Cache-Control: public, max-age=…`. Default `true`. */
  cacheControl?: boolean
  /** Milliseconds, or an `ms` string such as `'1d'`; capped at one year. Default `0`. */
  maxAge?: number | string
  /** Alias of `maxAge`, as in serve-static. */
  maxage?: number | string
  /** Add `immutable` to Cache-Control. Default `false`. */
  immutable?: boolean
  /** Dotfile policy for every path segment: 404 (`'ignore'`), 403 (`'deny'`) or serve (`'allow'`). Default `'ignore'`. */
  dotfiles?: 'allow' | 'deny' | 'ignore'
  /** Send a weak ETag made of size and mtime. Default `true`. */
  etag?: boolean
  /** Send Last-Modified. Default `true`. */
  lastModified?: boolean
  /** Extensions tried, in order, for an extensionless name that does not exist, e.g. `['html']`. Default none. */
  extensions?: string[] | false
  /** Index files tried for a path ending in `/`; `false` disables. Default `['index.html']`. */
  index?: string | string[] | false
  /** Send `file.br` / `file.gz` when the client accepts them (Content-Encoding, `Vary: Accept-Encoding`). Default `false`. */
  precompressed?: boolean
  /** Serve files reached through symbolic links that lead outside the root. Default `false` (404). */
  allowSymlinksOutsideRoot?: boolean
  /** Called before the file's headers are set; headers it sets win over zcopy's. */
  setHeaders?: (res: ServerResponse | Http2ServerResponse, path: string, stat: Stats) => void
  /**
   * Called once a body has been handed over completely (not for HEAD, 304, errors
   * or a client that went away), with how it went: `zeroCopy` is true only when
   * the kernel moved the bytes with sendfile.
   */
  onSent?: (res: ServerResponse | Http2ServerResponse, sent: { bytes: number, zeroCopy: boolean }) => void
}

export interface SendFileOptions extends FileResponseOptions {
  /** Directory `path` is relative to; `path` cannot leave it. Without it `path` must be absolute. */
  root?: string
}

export interface ServeStaticOptions extends FileResponseOptions {
  /** `next()` on not-found and on methods other than GET/HEAD; when off, `next(err)` and 405. Default `true`. */
  fallthrough?: boolean
  /** Redirect a directory to its path with a trailing slash (301). Default `true`. */
  redirect?: boolean
  /** Open files kept in the open-file cache (descriptor + stat, revalidated on every request); `0` disables it. Default `128`. */
  maxOpenFiles?: number
}

/** The error sendFile rejects with, and serveStatic passes to `next(err)`. */
export interface HttpError extends Error {
  name: 'HttpError'
  status: number
  statusCode: number
  /** `true` below 500: the message may be shown to the client. */
  expose: boolean
  /** Headers the error response should carry (416: `Content-Range`). */
  headers?: Record<string, string>
  /** The filesystem error code behind it, when there is one. */
  code?: string
}

/**
 * Answers one GET or HEAD request with one file: status, headers, body (zero-copy
 * over plain TCP). Resolves when the response is complete or the client went away.
 * Rejects with an `HttpError` (400, 403, 404, 412, 416, 500) before anything was
 * sent, for the caller to answer; or with the transfer's error after the headers
 * were sent (the response is then destroyed).
 */
export function sendFile (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
  path: string,
  options?: SendFileOptions
): Promise<void>

export interface ServeStaticMiddleware {
  (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, next: (err?: unknown) => void): void
  /** Closes the cached file descriptors (also done when the server closes). */
  close (): Promise<void>
}

/** Connect / Express middleware, a drop-in for `express.static(root, options)`. */
export function serveStatic (root: string, options?: ServeStaticOptions): ServeStaticMiddleware
