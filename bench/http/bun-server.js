'use strict'
/* global Bun */

// Bun's static file server, run by Bun itself (bun.js starts it):
//   bun bench/http/bun-server.js ROOT PORT WORKERS [CERT KEY]
// The idiomatic fast way: Bun.serve with a route per file of ROOT, each a
// Response of Bun.file, which Bun answers in its native code (sendfile, with
// Last-Modified, and 304 to If-Modified-Since; Bun gives such routes no ETag);
// anything else through fetch(), a Bun.file per request. WORKERS > 1: that many
// processes on the port (reusePort), children of this one, which only waits.

const fs = require('node:fs')
const path = require('node:path')

const [root, port, workers, cert, key] = process.argv.slice(2)
const CHILD = 'ZCOPY_BENCH_BUN_CHILD'

// '/a/b.bin' → Response(Bun.file(ROOT/a/b.bin)) for every file under `dir`.
function routes (dir, prefix = '/', table = {}) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) routes(file, `${prefix}${entry.name}/`, table)
    else if (entry.isFile()) table[`${prefix}${entry.name}`] = new Response(Bun.file(file))
  }
  return table
}

function serve () {
  const base = path.resolve(root)
  Bun.serve({
    hostname: '127.0.0.1',
    port: Number(port),
    reusePort: Number(workers) > 1,
    tls: cert ? { cert: Bun.file(cert), key: Bun.file(key) } : undefined,
    routes: routes(base),
    async fetch (req) {
      const file = path.join(base, decodeURIComponent(new URL(req.url).pathname))
      const body = Bun.file(file)
      if (!file.startsWith(base + path.sep) || !(await body.exists())) return new Response(null, { status: 404 })
      return new Response(body)
    }
  })
}

if (Number(workers) > 1 && !process.env[CHILD]) {
  const children = Array.from({ length: Number(workers) }, () =>
    Bun.spawn([process.execPath, ...process.argv.slice(1)], { env: { ...process.env, [CHILD]: '1' }, stdio: ['ignore', 'inherit', 'inherit'] }))
  process.on('SIGTERM', async () => {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map((child) => child.exited))
    process.exit(0)
  })
} else {
  serve()
}
