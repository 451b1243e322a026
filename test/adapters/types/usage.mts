// zcopy/koa and zcopy/fastify from ESM TypeScript, resolved through package.json "exports".
import serve from 'zcopy/koa'
import zcopyFastify from 'zcopy/fastify'
import Fastify from 'fastify'

const middleware = serve('/srv/www', { maxAge: '1d', dotfiles: 'deny', fallthrough: false })
const defaults = serve('/srv/www', null)
// Koa ships no types of its own: a minimal stand-in for app.use().
const app = { use (fn: (ctx: any, next: () => Promise<any>) => unknown) { return fn } }
app.use(middleware)
app.use(defaults)
const closed: Promise<void> = middleware.close()

const fastify = Fastify()
fastify.register(zcopyFastify, { root: '/srv/www', prefix: '/public/', decorateReply: true, immutable: true })
fastify.get('/one', (request, reply) => reply.sendFile('one.html'))
fastify.get('/two', (request, reply) => reply.sendFile('two.html', '/srv/other'))
fastify.get('/three', (request, reply) => reply.sendFile('three.html', { root: '/srv/other' }))

// @ts-expect-error root is required
fastify.register(zcopyFastify, { prefix: '/x/' })
// @ts-expect-error dotfiles takes 'allow' | 'deny' | 'ignore'
serve('/srv/www', { dotfiles: 'no' })

export { closed }
