// The addon's calls the layers above lib/engine use, by name, from the
// engine's index (lib/engine/addon-calls.js): each is the addon's function, or
// null without the addon (ZCOPY_NATIVE=0, the second pass of npm test), and
// each does through the index what the addon does. Real files, a real socket
// pair; test/engine/open-beneath.test.mjs and the others cover each call in
// depth, here the named door.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { once } from 'node:events'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import engine from '../../lib/engine/index.js'
import { native } from '../../lib/engine/binding.js'
import { fdTable, openedSince } from '../support/fd-table.cjs'
import { makeTempDir, removeTempDir } from '../support/files.mjs'

const ROOT = new URL('../..', import.meta.url).pathname
const SCHED_IDLE = 5

const CALLS = { openBeneath: 'openBeneath', lookupBeneath: 'lookupBeneath', closeFd: 'close', changesPending: 'changesPending', setCork: 'setCork', socketRoom: 'socketRoom', trimMemory: 'trimMemory', idlePriority: 'idlePriority', probeKernel: 'probeKernel', Lane: 'Lane', parseRequestHead: 'parseRequestHead' }

let dir
beforeAll(() => {
  dir = makeTempDir('zcopy-addon-calls-')
  fs.mkdirSync(path.join(dir, 'root'))
  fs.writeFileSync(path.join(dir, 'root', 'inside.txt'), 'inside')
  fs.writeFileSync(path.join(dir, 'outside.txt'), 'outside')
})
afterAll(() => removeTempDir(dir))

it('each call is the addon\'s function, or null without the addon', () => {
  for (const [name, addonName] of Object.entries(CALLS)) {
    expect(engine[name], name).toBe(native === null ? null : native[addonName])
  }
})

describe.runIf(native !== null)('with the addon', () => {
  it('openBeneath opens beneath a folder and refuses what leads out; closeFd closes it', async () => {
    const before = fdTable()
    const rootFd = fs.openSync(path.join(dir, 'root'), 'r')
    try {
      const opened = await engine.openBeneath(rootFd, 'inside.txt')
      expect(fs.readFileSync(opened.fd, 'utf8')).toBe('inside')
      engine.closeFd(opened.fd)
      await expect(engine.openBeneath(rootFd, '../outside.txt')).rejects.toMatchObject({ code: 'EXDEV' })
    } finally {
      fs.closeSync(rootFd)
    }
    expect(openedSince(before)).toEqual([]) // (not a count: another descriptor of the process may close meanwhile)
  })

  it('lookupBeneath stats a name and opens it beneath the folder, and refuses what leads out', async () => {
    const before = fdTable()
    const root = path.join(dir, 'root')
    const rootFd = fs.openSync(root, 'r')
    try {
      const opened = await engine.lookupBeneath(rootFd, 'inside.txt', path.join(root, 'inside.txt'), root)
      expect(opened.link).toBe(false)
      expect(fs.readFileSync(opened.fd, 'utf8')).toBe('inside')
      engine.closeFd(opened.fd)
      await expect(engine.lookupBeneath(rootFd, '../outside.txt', path.join(dir, 'outside.txt'), root))
        .rejects.toMatchObject({ code: 'EXDEV' })
    } finally {
      fs.closeSync(rootFd)
    }
    expect(openedSince(before)).toEqual([]) // (not a count: another descriptor of the process may close meanwhile)
  })

  it('idlePriority moves every thread of the calling process to SCHED_IDLE (in a child: it cannot come back)', () => {
    const script = `
      const fs = require('node:fs')
      const moved = require('./lib/engine').idlePriority()
      const threads = fs.readdirSync('/proc/self/task')
      // A thread may end between the listing and its read (Node 24.21 seen): skipped.
      const policyOf = (tid) => {
        try {
          return Number(fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ')[38])
        } catch (err) {
          if (err.code === 'ENOENT' || err.code === 'ESRCH') return null
          throw err
        }
      }
      const policies = threads.map(policyOf).filter((policy) => policy !== null)
      process.stdout.write(JSON.stringify({ moved, policies }))`
    const { moved, policies } = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' }))
    expect(moved).toBeGreaterThan(0)
    expect(new Set(policies)).toEqual(new Set([SCHED_IDLE]))
  })

  it('changesPending tells whether the loop\'s inotify queue holds events, or null', () => {
    expect([true, false, null]).toContain(engine.changesPending())
  })

  it('setCork and socketRoom act on a real socket\'s descriptor', async () => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const client = net.connect(server.address().port, '127.0.0.1')
    const [accepted] = await once(server, 'connection')
    try {
      await once(client, 'connect')
      const fd = engine.socketFd(client)
      expect(fd).toBeGreaterThan(0)
      expect(engine.setCork(fd, true)).toBeTruthy()
      engine.setCork(fd, false)
      expect(engine.socketRoom(fd)).toBeGreaterThan(0)
    } finally {
      client.destroy()
      accepted.destroy()
      server.close()
    }
  })

  it('probeKernel reports sendfile, and trimMemory runs', () => {
    expect(engine.probeKernel(dir).sendfile.present).toBe(true)
    expect(() => engine.trimMemory()).not.toThrow()
  })
})
