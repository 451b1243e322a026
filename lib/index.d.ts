/// <reference types="node" />
import type { ReadStream, WriteStream } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http'
import type { Server as NetServer, Socket } from 'node:net'
import type { Writable } from 'node:stream'

export * from './http/types'
import type { ReplayableAnswer } from './http/types'

/** True when the native addon is loaded and sendfile(2) (copy_file_range(2) file to file) is used; false on the pure-JS fallback. */
export declare const zeroCopyAvailable: boolean

/** Why the native addon is not loaded; `loadError.code` tells which case it is. */
export type ZcopyLoadErrorCode =
  /** Not Linux: zero-copy is Linux-only and no addon is loaded. */
  | 'ZCOPY_UNSUPPORTED_PLATFORM'
  /** Bun: it lacks the libuv functions the addon calls, so the addon is not loaded there. */
  | 'ZCOPY_UNSUPPORTED_RUNTIME'
  /** `ZCOPY_NATIVE=0` is set in the environment: the fallback was asked for. */
  | 'ZCOPY_NATIVE_DISABLED'
  /** No prebuild for this platform and no local build (`npx zcopy build` makes one; the message names it). */
  | 'ZCOPY_NATIVE_NOT_FOUND'
  /** A binary was found but the dynamic loader refused it (another ABI, libc or architecture). */
  | 'ERR_DLOPEN_FAILED'
  /** Anything else that went wrong while loading the binary. */
  | 'ZCOPY_NATIVE_LOAD_FAILED'
  | (string & {})

export interface ZcopyLoadError extends Error {
  code: ZcopyLoadErrorCode
  /** The underlying error (node-gyp-build's or the loader's), when there is one. */
  cause?: unknown
}

/**
 * `null` when the native addon is loaded (`zeroCopyAvailable` is true); otherwise
 * the error that kept it from loading. Nothing throws it: zcopy runs on the stream
 * fallback. `npx zcopy doctor` explains it and says how to fix it.
 */
export declare const loadError: ZcopyLoadError | null

export interface SendfileOptions {
  /**
   * Aborts the transfer in whatever state it is (opening, waiting for a socket,
   * running, even from inside `onProgress`): the promise rejects with an
   * AbortError whose `cause` is the signal's reason, once the transfer has let go
   * of the descriptors. An abort after the promise settled changes nothing.
   * Anything but an AbortSignal throws ERR_INVALID_ARG_TYPE synchronously.
   */
  signal?: AbortSignal
  /** Called with the bytes moved so far, at chunk boundaries. */
  onProgress?: (bytes: number) => void
}

/**
 * Moves `length` bytes of `inFd` starting at `offset` to `outFd` (a socket, pipe or
 * file) on libuv's thread pool. Resolves with the bytes moved (always `length`).
 * Rejects with `code: 'ERR_ZCOPY_TRUNCATED'` if the file ends first, and with
 * Node-style system errors (`code`, `errno`, `syscall`) otherwise.
 * Throws TypeError/RangeError synchronously for bad arguments.
 */
export declare function sendfile (
  outFd: number,
  inFd: number,
  offset: number,
  length: number,
  options?: SendfileOptions
): Promise<number>

export type PipeFileSource = string | Buffer | URL | number | FileHandle
export type PipeFileDestination = Socket | WriteStream | Writable | string | Buffer | URL | number

export interface PipeFileOptions extends SendfileOptions {
  /** First byte to send. Default 0. */
  start?: number
  /** Last byte to send, inclusive, clamped to the file's size. Default: end of file. */
  end?: number
  /**
   * Bytes written just before the file's (a protocol header, say); strings are
   * UTF-8. On a socket they share a packet with the file's first bytes. Not
   * counted in `bytes` nor in `onProgress`.
   */
  head?: string | NodeJS.ArrayBufferView
}

export interface PipeFileResult {
  /** File bytes written to the destination (the head not included). */
  bytes: number
  /** Whether the kernel moved them (sendfile, or copy_file_range file to file) rather than the stream fallback. */
  zeroCopy: boolean
}

/**
 * Sends a byte range of a file to a socket, fd, path, WriteStream or any Writable.
 * Zero-copy for non-TLS sockets, pipes and files (copy_file_range(2) file to
 * file, as fs.copyFile; a small copy by path is one thread-pool job); streams
 * otherwise, same bytes.
 * Never ends a destination it did not open, and never closes a descriptor it did
 * not open (a caller's fd is written with write(2), never wrapped in a stream);
 * destroys a stream destination whose transfer failed or was aborted, and a socket
 * that got part of the file.
 */
export declare function pipeFile (
  source: PipeFileSource,
  destination: PipeFileDestination,
  options?: PipeFileOptions
): Promise<PipeFileResult>

export interface ZeroCopyReadStream extends ReadStream {
  /** True once the stream handed its bytes to sendfile instead of emitting them. */
  readonly zeroCopy: boolean
}

/**
 * A drop-in for fs.createReadStream: when piped (or stream.pipeline'd) into a socket
 * or an fs.WriteStream before any data is read, the bytes move with sendfile.
 */
export declare function createReadStream (
  path: import('node:fs').PathLike,
  options?: BufferEncoding | Parameters<typeof import('node:fs').createReadStream>[1]
): ZeroCopyReadStream

export interface ProtectServerOptions {
  /**
   * Milliseconds a connection may stay without reading or writing a byte (before
   * its first request, while a client reads nothing of a response, or once the
   * peer is gone), and the time a request head has to arrive in full:
   * `server.timeout` (HTTP/2 sessions too) and `server.headersTimeout`.
   * Default 60000 (nginx's `client_header_timeout` / `send_timeout`); 0 leaves
   * Node's timeouts as they are. A socket whose write Node believes still in
   * progress when the period ends gets one more (Node's rule): up to twice this.
   */
  timeout?: number
}

/**
 * Protects a node:http, node:https or node:http2 server from clients that stall,
 * vanish or pipeline over TLS: on TLS, makes Node's HTTP/1 parser respect its
 * pause (without it, pipelined requests can cut a response mid-body or get a
 * 400: HPE_PAUSED), sets idle and head timeouts (see `timeout`), and answers
 * pipelined requests in full before Node's 400 for bytes its parser refuses
 * behind them (a 'clientError' listener; an app's own one takes over).
 * Call it right after creating the server. → the server.
 */
export declare function protectServer<S extends NetServer> (server: S, options?: ProtectServerOptions): S

/** An answer the native lane wrote itself (`NativeLaneOptions.onAnswer`), as an access log line needs it. */
export interface NativeLaneAnswer {
  /** When it ended, in ms since the epoch. */
  time: number
  method: 'GET' | 'HEAD'
  /** The request target as sent (latin1, as `req.url`). */
  target: string
  status: number
  /** Body bytes sent. */
  bytes: number
  /** Milliseconds from the request's head to the answer's end. */
  ms: number
  zeroCopy: boolean
  fromMemory: boolean
  /** Its Content-Encoding, or null. */
  encoding: string | null
  ended: 'complete' | 'aborted' | 'shutdown'
}

export interface NativeLaneOptions {
  /** Hears each answer the lane wrote itself (the server's 'request' listeners never see those), in batches once per loop turn. */
  onAnswer?: (answer: NativeLaneAnswer) => void
}

export interface NativeLaneAddress {
  address: string
  family: 'IPv4' | 'IPv6'
  port: number
}

export interface NativeLane {
  /**
   * serveStatic's `onReplayable`: the answers it hears (and that are for
   * everyone: no Authorization in the request, no Set-Cookie, no
   * `Cache-Control: private` or `no-store`, no Vary but Accept-Encoding) the
   * lane replays to the same requests until the file changes or the cache
   * drops it. Pass it only to a serveStatic whose answers depend on nothing
   * but the request's method, target, Host, Accept-Encoding, conditions and
   * Range (no middleware before it that decides by cookie, user or origin).
   */
  offer: (req: IncomingMessage, res: ServerResponse, answer: ReplayableAnswer) => void
  /** Binds and listens instead of `server.listen()`, as it does: `host` resolved by dns.lookup; without one, every interface (`::`, or `0.0.0.0` without IPv6). Port 0: any free one. */
  listen (port?: number, host?: string): Promise<NativeLaneAddress>
  /** `{ port, host }`, or `{ fd, host }`: accept from a listening socket this process was given (`host`: what the address reports, default `0.0.0.0`). */
  listen (where: { port?: number, host?: string, fd?: number }): Promise<NativeLaneAddress>
  /**
   * `server.close()` for a server the lane is in front of: no more
   * connections; idle ones (the lane's, and those lent or handed to the
   * server) close at once, answers in flight get up to `timeoutMs` (default:
   * until done; the server's timeouts bound them), each connection closed
   * once idle, then every connection is cut and the server emits 'close'.
   */
  close (timeoutMs?: number): Promise<void>
  /**
   * The connections the lane holds (idle, reading, writing an answer: its
   * own, or the rest of a lent request's file body), but for those with a
   * request lent to the server, which counts them itself, as those handed to
   * it: with `server.getConnections()`, every one.
   */
  connections (): number
  /** Once close() began: the answers the lane is still writing itself. */
  answersInFlight (): number
}

/**
 * Puts zcopy's native lane in front of a node:http server (plain HTTP/1.1;
 * Express, Koa and any handler behind it): the lane owns the listening socket
 * and reads each connection one request at a time, as nginx does, so a client
 * that pipelines requests holds one request's memory, not one per request
 * sent. It answers in C the requests it was offered answers for
 * (`lane.offer` as serveStatic's `onReplayable`); it lends every other
 * request (any method Node knows but CONNECT, its body as it arrives and
 * no faster than the server reads it) to the server through a
 * twin of the connection (`req.socket`: remoteAddress, remotePort,
 * localAddress, localPort, address(); setTimeout, setNoDelay and
 * setKeepAlive do nothing), and hands the server, for good, a connection
 * whose request is an upgrade, or has a head it cannot frame exactly as
 * Node does. Call `lane.listen()` instead of `server.listen()`; the server
 * emits 'listening' then (Node's headersTimeout and requestTimeout checks run
 * on what the lane lends and hands it), and `lane.close()` instead of
 * `server.close()`. Throws `ERR_ZCOPY_NO_ADDON` where the native addon did
 * not load, a TypeError for anything but a node:http Server.
 */
export declare function nativeLane (server: HttpServer, options?: NativeLaneOptions): NativeLane
