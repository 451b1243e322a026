// zcopy/koa and zcopy/fastify from CommonJS TypeScript.
import serve = require('zcopy/koa')
import zcopyFastify = require('zcopy/fastify')

const middleware: serve.Middleware = serve('/srv/www', { etag: false })
const plugin: zcopyFastify.ZcopyFastifyPlugin = zcopyFastify
const alsoDefault: typeof plugin = zcopyFastify.default
const koaDefault: serve.Serve = serve.default

export = { middleware, plugin, alsoDefault, koaDefault }
