// Confinement is proven on the opened descriptor, not on a name checked before it.
// A child process flips a directory inside the root with a symlink to a directory
// outside it (renames, in a tight loop) while clients hammer a file below it over
// keep-alive: the outside file's bytes are never on the wire, during the race or
// after it (the open-file cache must not keep anything opened outside), and once
// the race stops the path answers for what it now is: 404 through the symlink, the
// inside bytes through the directory.

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { lstatSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import zcopy from '../../lib/index.js'
import { listen, request } from '../support/http.mjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const RACE_MS = Number(process.env.ZCOPY_RACE_MS || 4000)
const CLIENTS = 16
const FLIPPER = fileURLToPath(new URL('./children/confinement-flipper.mjs', import.meta.url))

// Distinctive bytes on each side, of different lengths (headers would differ too).
const OUTSIDE = `OUTSIDE-LEAK-${randomBytes(12).toString('hex')}\n`.repeat(3)
const INSIDE = `inside-${randomBytes(12).toString('hex')}\n`

let base, root, outside

beforeAll(() => {
  base = makeTempDir('zcopy-race-')
  root = join(base, 'root')
  outside = join(base, 'outside')
  mkdirSync(join(root, 'thatdir'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(root, 'thatdir', 'file.txt'), INSIDE)
  writeFileSync(join(outside, 'file.txt'), OUTSIDE)
  symlinkSync(outside, join(root, '.parked-link')) // absolute, as a link to /etc would be
})

afterAll(() => removeTempDir(base))

const isLink = () => lstatSync(join(root, 'thatdir')).isSymbolicLink()

function putSymlinkInPlace () {
  if (isLink()) return
  renameSync(join(root, 'thatdir'), join(root, '.parked-dir'))
  renameSync(join(root, '.parked-link'), join(root, 'thatdir'))
}

function putDirectoryInPlace () {
  if (!isLink()) return
  renameSync(join(root, 'thatdir'), join(root, '.parked-link'))
  renameSync(join(root, '.parked-dir'), join(root, 'thatdir'))
}

function get (agent, port, path) {
  return request(port, path, { agent }).then(({ status, body }) => ({ status, body: body.toString('latin1') }))
}

// Tallies answers; a leak is any answer with a byte of the outside file's marker.
function tally (counts, answer) {
  counts.requests++
  if (answer.body.includes('OUTSIDE-LEAK-')) counts.leaks++
  else if (answer.status === 200 && answer.body === INSIDE) counts.inside++
  else if (answer.status === 404) counts.notFound++
  else counts.other.push(`${answer.status} ${answer.body.slice(0, 40)}`)
}

const SERVERS = {
  serveStatic: () => {
    const serve = zcopy.serveStatic(root, { fallthrough: false })
    return (req, res) => serve(req, res, (err) => {
      res.statusCode = err ? err.status || 500 : 404
      res.end()
    })
  },
  'sendFile with a root': () => (req, res) => {
    zcopy.sendFile(req, res, req.url, { root }).catch((err) => {
      res.statusCode = err.status || 500
      res.end()
    })
  }
}

describe.each(Object.keys(SERVERS))('%s', (kind) => {
  test(`a directory flipped with a symlink out of the root for ${RACE_MS} ms: the outside bytes are never served`, async () => {
    putDirectoryInPlace()
    const app = await listen(SERVERS[kind]())
    const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS })
    const counts = { requests: 0, leaks: 0, inside: 0, notFound: 0, other: [] }
    try {
      // Warm: the inside file is in the open-file cache before the race starts.
      expect(await get(agent, app.port, '/thatdir/file.txt')).toEqual({ status: 200, body: INSIDE })

      const flipper = spawn(process.execPath, [FLIPPER, root, 'thatdir', String(RACE_MS)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let flips = ''
      flipper.stdout.on('data', (chunk) => { flips += chunk })
      const flipperDone = once(flipper, 'close')
      let racing = true
      flipperDone.then(() => { racing = false })
      await Promise.all(Array.from({ length: CLIENTS }, async () => {
        while (racing) tally(counts, await get(agent, app.port, '/thatdir/file.txt'))
      }))
      const [code] = await flipperDone
      expect(code).toBe(0)
      console.log(`${kind}, ${process.env.ZCOPY_NATIVE === '0' ? 'JS fallback' : 'native'}: ${flips} flips, ` +
        `${counts.requests} requests during the race: ${counts.inside} inside, ${counts.notFound} 404, ` +
        `${counts.leaks} leaks, ${counts.other.length} other`)
      expect(Number(flips)).toBeGreaterThan(1000)
      expect(counts.inside).toBeGreaterThan(0) // the race really was run against served requests

      // After the race, whatever the cache holds: the symlink answers 404, the
      // directory the inside bytes, and again, on the same keep-alive connections.
      for (let round = 0; round < 2; round++) {
        putSymlinkInPlace()
        for (let i = 0; i < 2 * CLIENTS; i++) tally(counts, await get(agent, app.port, '/thatdir/file.txt'))
        const viaLink = await Promise.all(Array.from({ length: CLIENTS }, () => get(agent, app.port, '/thatdir/file.txt')))
        for (const answer of viaLink) tally(counts, answer)
        expect(viaLink.map((answer) => answer.status)).toEqual(Array(CLIENTS).fill(404))

        putDirectoryInPlace()
        const viaDir = await Promise.all(Array.from({ length: CLIENTS }, () => get(agent, app.port, '/thatdir/file.txt')))
        expect(viaDir).toEqual(Array(CLIENTS).fill({ status: 200, body: INSIDE }))
      }
      expect(counts.leaks).toBe(0)
      expect(counts.other).toEqual([])
    } finally {
      agent.destroy()
      await app.close()
    }
  })
})
