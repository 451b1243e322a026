// zcopy/koa: a Koa middleware serving files under a root with zcopy.
import type { ServeStaticOptions, ServeStaticStats } from '../http/types'

declare namespace serve {
  /** koa-static's (koa-send's) options, and serveStatic's (zcopy's own: maxOpenFiles, memoryCache, maxWatches, onSent…). */
  export interface Options extends Omit<ServeStaticOptions, 'redirect' | 'extensions'> {
    /** `await next()` first; serve only when nothing downstream answered (no body, status 404). Default `false`. */
    defer?: boolean
    /** A directory asked for without its trailing slash is answered with its index (no redirect); `false`: not found. Default `true`. */
    format?: boolean
    /** Serve dotfiles (`dotfiles: 'allow'`); default `false` (not found). */
    hidden?: boolean
    /** Send `file.gz` to clients that accept gzip. Default `true`. */
    gzip?: boolean
    /** Send `file.br` to clients that accept br. Default `true`. */
    brotli?: boolean
    /** Cache-Control max-age in milliseconds (koa-send's spelling of `maxAge`). */
    maxage?: number
    /** Extensions tried for a path without one: `['html']` or `['.html']`, or `false`. */
    extensions?: string[] | false
  }
  export interface Middleware {
    // Koa's (ctx, next) middleware signature, without depending on @types/koa.
    (ctx: any, next: () => Promise<any>): Promise<void>
    /** What the caches hold now. */
    stats (): ServeStaticStats
    /** Resolves once no compressed variant (`compress`) is being made or waits to be. */
    compressed (): Promise<void>
    /** The folder larger compressed variants are written to, or null: none. */
    compressedFolder (): Promise<string | null>
    /** Closes the cached file descriptors (also done when the server closes). */
    close (): Promise<void>
  }
  export type Serve = (root: string, options?: Options | null) => Middleware
  export const serve: Serve
  export { serve as default }
}

/**
 * `app.use(serve(root, options))`, a drop-in for koa-static: GET/HEAD for files
 * under `root`, answered with 200/206/304/412/416; a miss goes on to `next()`
 * (with `defer`, comes after it); other errors (403, 400, 500) are thrown into
 * Koa's error handling.
 */
declare function serve (root: string, options?: serve.Options | null): serve.Middleware

export = serve
