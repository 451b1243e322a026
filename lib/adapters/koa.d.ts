// zcopy/koa: a Koa middleware serving files under a root with zcopy.
import type { ServeStaticOptions } from '../http/types'

declare namespace serve {
  export type Options = ServeStaticOptions
  export interface Middleware {
    // Koa's (ctx, next) middleware signature, without depending on @types/koa.
    (ctx: any, next: () => Promise<any>): Promise<void>
    /** Closes the cached file descriptors (also done when the server closes). */
    close (): Promise<void>
  }
  export type Serve = (root: string, options?: Options | null) => Middleware
  export const serve: Serve
  export { serve as default }
}

/**
 * `app.use(serve(root, options))`: GET/HEAD for files under `root`, answered with
 * 200/206/304/412/416 (or 301 for a directory); a miss goes on to `next()`; other
 * errors (403, 400, 500) are thrown into Koa's error handling.
 */
declare function serve (root: string, options?: serve.Options | null): serve.Middleware

export = serve
