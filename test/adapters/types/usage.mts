// zcopy/koa and zcopy/fastify from ESM TypeScript, resolved through package.json "exports".
import serve from 'zcopy/koa'
import zcopyFastify from 'zcopy/fastify'
import Fastify from 'fastify'

const middleware = serve('/srv/www', { maxAge: '1d', dotfiles: 'deny', fallthrough: false })
const defaults = serve('/srv/www', null)
const compressing = serve('/srv/www', { compress: { encodings: ['br'], cacheDir: false } })
void compressing.compressed()
const koaStatic = serve('/srv/www', { defer: true, format: false, hidden: true, gzip: false, brotli: true, maxage: 60000, extensions: ['.html'], index: 'index.txt' })
appUseLater(koaStatic)
const watched: number = koaStatic.stats().watchedDirectories
void watched
// @ts-expect-error defer is a boolean
serve('/srv/www', { defer: 'yes' })
// Koa ships no types of its own: a minimal stand-in for app.use().
const app = { use (fn: (ctx: any, next: () => Promise<any>) => unknown) { return fn } }
app.use(middleware)
function appUseLater (fn: (ctx: any, next: () => Promise<any>) => unknown) { return app.use(fn) }
app.use(defaults)
const closed: Promise<void> = middleware.close()

const fastify = Fastify()
fastify.register(zcopyFastify, { root: '/srv/www', prefix: '/public/', decorateReply: true, immutable: true })
fastify.get('/one', (request, reply) => reply.sendFile('one.html'))
fastify.get('/two', (request, reply) => reply.sendFile('two.html', '/srv/other'))
fastify.get('/three', (request, reply) => reply.sendFile('three.html', { root: '/srv/other' }))

// @ts-expect-error root is required
fastify.register(zcopyFastify, { prefix: '/x/' })
fastify.register(zcopyFastify, { root: '/srv/www', prefix: '/c/', compress: { threshold: 2048 } })
// @ts-expect-error dotfiles takes 'allow' | 'deny' | 'ignore'
serve('/srv/www', { dotfiles: 'no' })

export { closed }

fastify.register(zcopyFastify, {
  root: ['/srv/www', new URL('file:///srv/more/')],
  preCompressed: true,
  wildcard: false,
  globIgnore: ['**/*.map'],
  list: { format: 'html', render: (dirs, files) => files.map((file) => file.href).join('\n') },
  allowedPath: (pathName, root, request) => request.url !== pathName,
  setHeaders: (reply, path, stat) => { reply.header('x-size', stat.size) },
  constraints: { host: 'static.example' },
  logLevel: 'warn'
})
fastify.register(zcopyFastify, { serve: false })
fastify.get('/four', (request, reply) => reply.download('report.pdf', 'Report.pdf', { maxAge: '1d' }))
fastify.get('/five', (request, reply) => reply.sendFile('five.html', { onFile: async () => {} }))
