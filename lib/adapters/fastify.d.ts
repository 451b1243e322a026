// zcopy/fastify: a Fastify plugin in the shape of @fastify/static, serving files
// with zcopy.
import type { FastifyPluginCallback } from 'fastify'
import type { ServeStaticOptions } from '../http/types'

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Answers with `path`, a file-system path below the plugin's root (or `root`);
     * a miss goes to the not-found handler. Decorated unless `decorateReply: false`.
     */
    sendFile (path: string, root?: string): FastifyReply
    sendFile (path: string, options: { root?: string }): FastifyReply
  }
}

declare namespace zcopyFastify {
  export interface ZcopyFastifyOptions extends Omit<ServeStaticOptions, 'fallthrough'> {
    /** The directory served. Required. */
    root: string
    /** URL prefix of the GET/HEAD `${prefix}*` routes (a trailing slash is added). Default `'/'`. */
    prefix?: string
    /** Decorate the reply with `sendFile(path, [root])`. Default `true`. */
    decorateReply?: boolean
  }
  export type ZcopyFastifyPlugin = FastifyPluginCallback<ZcopyFastifyOptions>
  export const zcopyFastify: ZcopyFastifyPlugin
  export { zcopyFastify as default }
}

declare function zcopyFastify (...params: Parameters<zcopyFastify.ZcopyFastifyPlugin>): ReturnType<zcopyFastify.ZcopyFastifyPlugin>

export = zcopyFastify
