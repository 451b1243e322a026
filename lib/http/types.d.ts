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
  /** zcopy (and @fastify/send): `false` sends no `Content-Type` of the file's (one the app set stays). Default `true`. */
  contentType?: boolean
  /** Milliseconds, or an `ms` string such as `'1d'`; capped at one year. Default `0`. */
  maxAge?: number | string
  /** Alias of `maxAge`, as in serve-static. */
  maxage?: number | string
  /** Add `immutable` to Cache-Control. Default `false`. */
  immutable?: boolean
  /** Dotfile policy for every path segment: 404 (`'ignore'`), 403 (`'deny'`) or serve (`'allow'`). Default `'ignore'`. */
  dotfiles?: 'allow' | 'deny' | 'ignore'
  /**
   * Send an ETag: `true` (default) a weak one made of size and mtime; `'content'` a strong one
   * made of the bytes (SHA-256), so that replicas agree whatever the mtimes; `false` none.
   */
  etag?: boolean | 'content'
  /** Send Last-Modified. Default `true`. */
  lastModified?: boolean
  /** Extensions tried, in order, for an extensionless name that does not exist, e.g. `['html']`. Default none. */
  extensions?: string[] | false
  /** Index files tried for a path ending in `/`; `false` disables. Default `['index.html']`. */
  index?: string | string[] | false
  /**
   * Send `file.br` / `file.gz` when the client's Accept-Encoding prefers them (q-values, `*`, RFC 9110; br first on a tie),
   * with Content-Encoding; every response for a path that has such a sibling carries `Vary: Accept-Encoding`. Default `false`.
   * An array names the codings whose siblings are sent (`['gzip']`: `file.gz` only).
   */
  precompressed?: boolean | Array<'br' | 'gzip'>
  /**
   * Compressed variants, made once per file version in the background and sent
   * from then on by sendfile (small ones from memory): the first request for a
   * file gets the file itself at once. `true` for the defaults, an object to
   * change them. Every response of a compressible file carries
   * `Vary: Accept-Encoding`; a precompressed sibling wins. Default `false`
   * (`zcopy serve`: on).
   */
  compress?: boolean | CompressOptions
  /** Serve files reached through symbolic links that lead outside the root. Default `false` (404). */
  allowSymlinksOutsideRoot?: boolean
  /** Called before the file's headers are set; headers it sets win over zcopy's. */
  setHeaders?: (res: ServerResponse | Http2ServerResponse, path: string, stat: Stats) => void
  /**
   * Called once per file body when its transfer ends (not for HEAD, 304 or
   * errors), with how it went: `bytes` sent, `zeroCopy` true only when the kernel
   * moved them with sendfile, `fromMemory` for the memory cache, and `complete`
   * false when the client went away first (`bytes` is then what was sent until
   * then); `variantPending` when, with `compress`, the file itself went because
   * its compressed variant was being made. Behind `zcopy.nativeLane`, a body
   * the connection could not take at once is sent on by the lane alone once
   * the response ended: onSent hears it then (`complete` true, the whole
   * range), with `finished`, which settles with what reached the connection
   * once the lane is done (never rejects).
   */
  onSent?: (res: ServerResponse | Http2ServerResponse, sent: { bytes: number, zeroCopy: boolean, fromMemory?: true, complete: boolean, variantPending?: true, finished?: Promise<{ bytes: number, complete: boolean }> }) => void
  /**
   * For `zcopy serve --native-lane` (experimental): called for each answer
   * that depends only on the request's method, target, Host,
   * Accept-Encoding, If-None-Match, If-Modified-Since and Range (to a GET or
   * HEAD without If-Range, If-Match or If-Unmodified-Since: a 304, a 206 of
   * one range of the file, or a whole 200 of the file, of a precompressed
   * sibling or of a compressed variant, none pending), with the body's
   * descriptor (valid during the call only; null for a variant kept in memory
   * only) and its stat, the body when kept in memory, `range` (of a 206),
   * `source` (the descriptor and stat of the file a sibling or
   * variant stands for), `whenDropped` (its listener runs once the cache drops
   * a file the answer was made of, or the variant goes) and `used` (counts a
   * replay as a use of those files; returns the body kept in memory, if any).
   */
  onReplayable?: (req: IncomingMessage, res: ServerResponse, answer: ReplayableAnswer) => void
}

/** What serveStatic's `onReplayable` hears of an answer (see there). */
export interface ReplayableAnswer {
  fd: number | null
  stat: Stats | null
  bytes: Buffer | null
  range: { start: number, end: number } | null
  source: { fd: number, stat: Stats } | null
  whenDropped: (listener: () => void) => void
  used: () => Buffer | null
}

/** The `compress` option's settings (each optional). */
export interface CompressOptions {
  /** Codings made, in the server's order of preference. Default `['br', 'gzip']` (and `'zstd'` where Node's zlib has it, before gzip). */
  encodings?: Array<'br' | 'zstd' | 'gzip'>
  /**
   * Media types compressed: patterns (`'text/*'`, `'application/*+json'`, exact
   * types), or a function of the type. Default: text/*, JavaScript, JSON, XML,
   * wasm, SVG, icons, BMP, TTF/OTF/EOT fonts.
   */
  types?: string[] | ((type: string) => boolean)
  /** Smallest file compressed, in bytes. Default 1024. */
  threshold?: number
  /** Largest file compressed, in bytes. Default 8 MiB. */
  maxSize?: number
  /** Folder the larger variants are written to (a private folder is made inside), or `false`: memory only. Default `<tmpdir>/zcopy-variants-<uid>`. */
  cacheDir?: string | false
  /** Bytes of variants on disk; the least recently used are removed beyond it. Default 256 MiB. */
  cacheBytes?: number
  /** Compressions run at once, in compression processes (or threads) shared by every store, never on libuv's pool. Default 1. */
  concurrency?: number
  /** Milliseconds of compression CPU per minute (any 60 s); past it the file itself is sent and nothing is queued. Default 10000. */
  cpuBudget?: number
}

/** What the variant store made and sent (`stats().compressed`, with `compress`). */
export interface CompressStats {
  /** Variants made. */
  made: number
  /** Responses answered with a variant (200 and 206). */
  served: number
  /** Bodies sent as the file itself (identity) because the coding the client prefers was still being made (the first request of a file). */
  identityWhilePending: number
  /** Variants removed: beyond `cacheBytes`, or their file changed. */
  evicted: number
  /** Compressions or writes that failed (the file was sent as it is). */
  failed: number
  /** Variants thrown away because their file changed while they were made. */
  discarded: number
  /** Bytes not sent thanks to whole variants (file size minus variant size, per response). */
  bytesSaved: number
  /** Variants made at the cheaper level (brotli 5, gzip 6, zstd 3) because their file's variant had been evicted. */
  cheap: number
  /** Variants not queued or not started because `cpuBudget` was spent. */
  overBudget: number
  /** Milliseconds of compression CPU spent (time on the thread where threads compress). */
  cpuMs: number
  /** Variants being made or waiting to be. */
  pending: number
  /** Bytes of variants in memory (within `memoryCache`). */
  memoryBytes: number
  /** Bytes of variants on disk (within `cacheBytes`). */
  diskBytes: number
  /** This store's own folder, once one was made. */
  cacheDir: string | null
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
  /**
   * Open files kept in the open-file cache (descriptor + stat, validated by inotify
   * watches, or by a stat per request where no watch can be set); `0` disables it.
   * Default: a quarter of the process's descriptor limit, between 128 and 8192.
   */
  maxOpenFiles?: number
  /**
   * Bytes of small (up to 64 KiB; up to 1 MiB for a request whose body is copied
   * anyway: TLS, HTTP/2, no addon), hot (asked for twice) files kept in memory and
   * sent with the response head in one write (`onSent` then reports
   * `zeroCopy: false`); `0` turns it off. Default 32 MiB.
   */
  memoryCache?: number
  /**
   * Directories watched at once (inotify) to validate cached files; past that, and
   * where inotify's own per-user limit is reached, files are checked by a stat per
   * request (never an error); `0` watches none. Default 1024.
   */
  maxWatches?: number
}

/** What a serveStatic middleware's caches hold now. */
export interface ServeStaticStats {
  /** Descriptors in the open-file cache. */
  openFiles: number
  /** Directories watched (inotify watches held) to validate them. */
  watchedDirectories: number
  /** Bytes of small files (and small compressed variants) kept in memory. */
  memoryBytes: number
  /** With `compress`: what the variant store made and sent. */
  compressed?: CompressStats
}

/**
 * The error sendFile rejects with, and serveStatic passes to `next(err)`: the one
 * express.static (send) gives for the same request, so handlers written for it
 * keep working.
 *
 * - No file-system cause: an http-errors instance, `expose: true`, the status
 *   text as `message`: 400 `BadRequestError` (malformed %-encoding, NUL byte),
 *   403 `ForbiddenError` (`..` segment, dotfile with `dotfiles: 'deny'`), 404
 *   `NotFoundError` (dotfile with `'ignore'`, a directory with `redirect: false` or
 *   asked for with a trailing slash, not a regular file, a symbolic link leaving
 *   the root), 412 `PreconditionFailedError`, 416 `RangeNotSatisfiableError`
 *   (`headers['Content-Range']`).
 * - A file-system error as the cause: that error itself (`name: 'Error'`, its
 *   `code`, `errno`, `syscall`, `path`, `message` and `stack`) with `status`,
 *   `statusCode` and `expose: false` added: 404 for ENOENT, ENOTDIR and
 *   ENAMETOOLONG; 500 for anything else (EACCES, EISDIR, EMFILE, ELOOP…).
 * - 500 with `expose: false` when the headers were already sent by someone else.
 */
export interface HttpError extends Error {
  /** `'NotFoundError'`, `'ForbiddenError'`, `'BadRequestError'`… or `'Error'` for a file-system error. */
  name: string
  status: number
  statusCode: number
  /** Whether the message may be shown to the client: `true` for http-errors' 4xx, `false` for file-system errors and 5xx. */
  expose: boolean
  /** Headers the error response should carry (416: `Content-Range`). */
  headers?: Record<string, string>
  /** The file-system error code (`'ENOENT'`…), when a file-system error is the cause. */
  code?: string
  errno?: number
  syscall?: string
  path?: string
}

export interface HttpErrorConstructor {
  /** http-errors' error for `status` (`new HttpError(404)` is a `NotFoundError`). */
  new (status: number, options?: { headers?: Record<string, string>, cause?: unknown }): HttpError
  /** True for every error sendFile / serveStatic give (http-errors' `isHttpError`). */
  [Symbol.hasInstance] (value: unknown): value is HttpError
  readonly prototype: HttpError
}

/** `err instanceof HttpError` holds for every error sendFile / serveStatic give. */
export declare const HttpError: HttpErrorConstructor

/** http-errors' `isHttpError`: an http-errors instance, or an error with `status`, `statusCode` and `expose`. */
export declare function isHttpError (value: unknown): value is HttpError

/**
 * Answers one GET or HEAD request with one file: status, headers, body (zero-copy
 * over plain TCP). Resolves when the response is complete or the client went away.
 * Rejects with an `HttpError` (400, 403, 404, 412, 416, 500; see there) before
 * anything was sent, for the caller to answer; or with the transfer's error after the headers
 * were sent (the response is then destroyed). Bad arguments throw at once: a TypeError
 * (`ERR_INVALID_ARG_TYPE` for a path that is not a string, `ERR_INVALID_ARG_VALUE` for a
 * relative path without `options.root`, a bad option).
 */
export function sendFile (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
  path: string,
  options?: SendFileOptions
): Promise<void>

export interface ServeStaticMiddleware {
  (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, next: (err?: unknown) => void): void
  /** What the caches hold now (e.g. to watch inotify use). */
  stats (): ServeStaticStats
  /** Resolves once no compressed variant is being made or waits to be (at once without `compress`). */
  compressed (): Promise<void>
  /** The folder larger compressed variants are written to (not `cacheDir` itself when that is not a private folder of this user's), or null: none. */
  compressedFolder (): Promise<string | null>
  /** Closes the cached file descriptors (also done when the server closes), and removes the compressed variants. */
  close (): Promise<void>
}

/** Connect / Express middleware, a drop-in for `express.static(root, options)`. */
export function serveStatic (root: string, options?: ServeStaticOptions | null): ServeStaticMiddleware
