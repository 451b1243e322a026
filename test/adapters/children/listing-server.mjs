// Child process for fastify-dir-list-bounds.test.mjs: a Fastify server with
// zcopy/fastify (or, with `peer`, @fastify/static) listing <root> as JSON with
// extended entries and extendedFolderInfo, in a process of its own (started with
// a small heap) so that a walk that never ends takes only this process down.
// Sends { port } over IPC once listening.
//   node --max-old-space-size=96 listing-server.mjs <root> [peer]

import Fastify from 'fastify'
import fastifyStatic from '@fastify/static'
import zcopyFastify from 'zcopy/fastify'

const [root, which] = process.argv.slice(2)
const app = Fastify()
app.register(which === 'peer' ? fastifyStatic : zcopyFastify, {
  root,
  index: false,
  list: { format: 'json', jsonFormat: 'extended', extendedFolderInfo: true }
})
await app.listen({ port: 0, host: '127.0.0.1' })
process.send({ port: app.server.address().port })
