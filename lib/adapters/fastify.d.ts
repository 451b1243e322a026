// zcopy/fastify: a drop-in for @fastify/static (10.x) that sends files with
// zcopy; the options are @fastify/static's, plus a few of zcopy's.
import type { Stats } from 'node:fs'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RegisterOptions, RouteOptions } from 'fastify'
import type { ServeStaticOptions } from '../http/types'

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Answers with `filename`, a file-system path below the plugin's root (or
     * `rootPath`); a miss goes to the not-found handler, a path with '.', '..' or
     * empty segments is refused (403). Decorated unless `decorateReply: false`.
     */
    sendFile (filename: string, rootPath?: string): FastifyReply
    sendFile (filename: string, options?: zcopyFastify.SendOptions): FastifyReply
    sendFile (filename: string, rootPath?: string, options?: zcopyFastify.SendOptions): FastifyReply
    /** sendFile with `Content-Disposition: attachment` (filename default: the file's name). */
    download (filepath: string, options?: zcopyFastify.SendOptions): FastifyReply
    download (filepath: string, filename?: string): FastifyReply
    download (filepath: string, filename?: string, options?: zcopyFastify.SendOptions): FastifyReply
  }
}

declare namespace zcopyFastify {
  export interface ExtendedInformation {
    fileCount: number
    totalFileCount: number
    folderCount: number
    totalFolderCount: number
    totalSize: number
    lastModified: number
    /** zcopy only: present (true) when a bound cut the walk (see docs/http.md, Fastify, `list`) */
    partial?: true
  }

  export interface ListDir {
    href: string
    name: string
    stats: Stats
    extendedInfo?: ExtendedInformation
  }

  export interface ListFile {
    href: string
    name: string
    stats: Stats
  }

  export type ListRender = (dirs: ListDir[], files: ListFile[]) => string

  export interface ListOptions {
    names?: string[]
    extendedFolderInfo?: boolean
    jsonFormat?: 'names' | 'extended'
  }

  export interface ListOptionsJsonFormat extends ListOptions {
    format: 'json'
    render?: ListRender
  }

  export interface ListOptionsHtmlFormat extends ListOptions {
    format: 'html'
    render: ListRender
  }

  /** The options a file is sent with (per call too, for sendFile and download). */
  export interface SendOptions {
    root?: string
    acceptRanges?: boolean
    /** `false`: a Content-Type set on the reply before is kept. */
    contentType?: boolean
    cacheControl?: boolean
    /** Default `'allow'`, as @fastify/static. */
    dotfiles?: 'allow' | 'deny' | 'ignore'
    /** As @fastify/static's; zcopy's own `'content'`: an ETag made of the bytes (see serveStatic's). */
    etag?: boolean | 'content'
    extensions?: string[]
    immutable?: boolean
    index?: string[] | string | false
    lastModified?: boolean
    maxAge?: string | number
    /** Runs (awaited) once a file is chosen, before it is sent; a throw goes to the error handler. */
    onFile?: (path: string, stat: Stats) => void | Promise<void>
    serveDotFiles?: boolean
  }

  export type Root = string | URL | Array<string | URL>

  type RootOptions =
    | { serve?: true, root: Root }
    | { serve: false, root?: Root }

  export type ZcopyFastifyOptions = Omit<SendOptions, 'root'> & RootOptions &
    Pick<ServeStaticOptions, 'maxOpenFiles' | 'memoryCache' | 'maxWatches' | 'allowSymlinksOutsideRoot' | 'onSent' | 'compress'> &
    Omit<RegisterOptions, 'logLevel'> & {
      /** URL prefix of the GET/HEAD `${prefix}*` routes (a trailing slash is added unless prefixAvoidTrailingSlash). Default `'/'`. */
      prefix?: string
      prefixAvoidTrailingSlash?: boolean
      /** Decorate the reply with `sendFile` and `download`. Default `true`. */
      decorateReply?: boolean
      /** Hide the routes from schema generators. Default `true`. */
      schemaHide?: boolean
      setHeaders?: (reply: FastifyReply, path: string, stat: Stats) => void
      /** A directory without its trailing slash (and the bare prefix) redirects (301). Default `false`: served. */
      redirect?: boolean
      /** `false`: one route per file found at registration. Default `true`. */
      wildcard?: boolean
      /** Glob patterns of files given no route, with `wildcard: false`. */
      globIgnore?: string[]
      list?: boolean | ListOptionsJsonFormat | ListOptionsHtmlFormat
      allowedPath?: (pathName: string, root: string | undefined, request: FastifyRequest) => boolean
      /** Serve file.br, file.gz or file.deflate when the client accepts that coding. Default `false`. */
      preCompressed?: boolean
      suppressWarning?: boolean
      constraints?: RouteOptions['constraints']
      logLevel?: NonNullable<RouteOptions['logLevel']>
    }

  export type FastifyStaticOptions = ZcopyFastifyOptions
  export type ZcopyFastifyPlugin = FastifyPluginAsync<NonNullable<ZcopyFastifyOptions>>
  export const zcopyFastify: ZcopyFastifyPlugin
  export const fastifyStatic: ZcopyFastifyPlugin
  export { zcopyFastify as default }
}

declare function zcopyFastify (...params: Parameters<zcopyFastify.ZcopyFastifyPlugin>): ReturnType<zcopyFastify.ZcopyFastifyPlugin>

export = zcopyFastify
