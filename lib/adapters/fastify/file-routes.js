'use strict'

// `wildcard: false`: one GET/HEAD route per file found under the roots at
// registration (the first root that has a path wins), plus one per directory
// with an index file ('/dir/', and '/dir' too with `redirect: true`).

const path = require('node:path')
const { listFiles } = require('./list-files')

async function addFileRoutes (fastify, { opts, prefix, routeOptions, sendPath }) {
  const indexes = new Set(opts.index === undefined ? ['index.html'] : [].concat(opts.index))
  const indexDirs = new Map()
  const routes = new Set()
  // Returns nothing: the reply answers (see ../fastify.js).
  const handler = (request, reply) => {
    const { file, rootPath } = request.routeOptions.config
    sendPath(request, reply, file, rootPath).catch((err) => reply.send(err))
  }
  const addRoute = (url, file, rootPath) => {
    fastify.route({ ...routeOptions, method: ['HEAD', 'GET'], url, handler, config: { file, rootPath } })
  }
  for (const dir of [].concat(opts.root)) {
    const root = dir.endsWith('/') ? dir : dir + '/' // as allowedPath is given it
    const files = await listFiles(root, { dot: Boolean(opts.serveDotFiles), ignore: opts.globIgnore })
    for (const file of files) {
      const route = prefix + file
      if (routes.has(route)) continue
      routes.add(route)
      addRoute(route, '/' + file, root)
      const dir = path.posix.dirname(route)
      if (indexes.has(path.posix.basename(route)) && !indexDirs.has(dir)) indexDirs.set(dir, root)
    }
  }
  for (const [dir, root] of indexDirs) {
    const pathname = dir.endsWith('/') ? dir : dir + '/'
    const file = '/' + pathname.replace(prefix, '')
    addRoute(pathname, file, root)
    if (opts.redirect === true) addRoute(pathname.replace(/\/$/, ''), file.replace(/\/$/, ''), root)
  }
}

module.exports = { addFileRoutes }
