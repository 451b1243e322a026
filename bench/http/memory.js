'use strict'

// Memory: 200 concurrent downloads of the 100 MiB file. The server's peak RSS
// (VmHWM, reset after a warm-up) minus its RSS before the load. Target for zcopy:
// at most 32 MiB of growth. express.static runs too, for scale.

const { fork } = require('node:child_process')
const { once } = require('node:events')
const { existsSync, readFileSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')

const DOWNLOADS = 200
const FILE = '100m.bin'

function kibibytes (pid, field) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)[1])
}

async function measureKind (kind, root) {
  const server = fork(join(__dirname, 'server.js'), [kind, root], { stdio: 'inherit' })
  try {
    const [{ port }] = await once(server, 'message')
    const url = `http://127.0.0.1:${port}/${FILE}`
    await runClient(url, 2) // warm-up
    const before = kibibytes(server.pid, 'VmRSS')
    writeFileSync(`/proc/${server.pid}/clear_refs`, '5') // reset VmHWM to the current RSS (Linux ≥ 4.0)
    const { bytes, failures } = await runClient(url, DOWNLOADS)
    const peak = kibibytes(server.pid, 'VmHWM')
    return { before, peak, growth: (peak - before) / 1024, bytes, failures }
  } finally {
    server.kill()
    await once(server, 'exit')
  }
}

async function runClient (url, count) {
  const client = fork(join(__dirname, 'download-client.js'), [url, String(count)], { stdio: 'inherit' })
  const [result] = await once(client, 'message')
  await once(client, 'exit')
  return result
}

async function measureMemory (root) {
  if (!existsSync(join(root, FILE))) return console.log(`\nmemory check skipped: no ${FILE}`)
  console.log(`\nmemory: ${DOWNLOADS} concurrent downloads of ${FILE}`)
  for (const kind of ['zcopy (node:http)', 'express.static']) {
    const { before, peak, growth, bytes, failures } = await measureKind(kind, root)
    console.log(`${kind.padEnd(20)} RSS ${(before / 1024).toFixed(1)} MiB → peak ${(peak / 1024).toFixed(1)} MiB: ` +
      `+${growth.toFixed(1)} MiB (${(bytes / 2 ** 30).toFixed(1)} GiB sent, ${failures} failed)`)
  }
}

module.exports = { measureMemory }
