'use strict'
// Run from a project that installed the packed tarball: require('zcopy') is the
// installed copy. Sends a file to a loopback socket with pipeFile and prints what
// happened as JSON.
const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { once } = require('node:events')

const zcopy = require('zcopy')
const packageDir = path.dirname(require.resolve('zcopy/package.json'))

async function main () {
  const file = path.join(__dirname, 'payload.bin')
  const data = crypto.randomBytes(3 * 1024 * 1024 + 17)
  fs.writeFileSync(file, data)

  let received
  const server = net.createServer((socket) => {
    const chunks = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => {
      received(Buffer.concat(chunks))
      socket.end()
    })
  })
  const body = new Promise((resolve) => { received = resolve })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const socket = net.connect(server.address().port, '127.0.0.1')
  await once(socket, 'connect')
  const result = await zcopy.pipeFile(file, socket)
  socket.end()
  const bytes = await body
  server.close()

  let binary = null
  try {
    // node-gyp-build as zcopy resolves it: pnpm does not hoist it to the project.
    const nodeGypBuild = require(require.resolve('node-gyp-build', { paths: [packageDir] }))
    binary = path.relative(packageDir, nodeGypBuild.path(packageDir))
  } catch {}
  process.stdout.write(JSON.stringify({
    zeroCopyAvailable: zcopy.zeroCopyAvailable,
    result,
    size: data.length,
    identical: bytes.equals(data),
    binary,
    hasBuildDir: fs.existsSync(path.join(packageDir, 'build'))
  }))
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
