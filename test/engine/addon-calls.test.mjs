// The addon's calls the layers above lib/engine use, by name, from the
// engine's index (lib/engine/addon-calls.js): each is the addon's function, or
// null without the addon (ZCOPY_NATIVE=0, the second pass of npm test), and
// each does through the index what the addon does. Real files, a real socket
// pair; test/engine/open-beneath.test.mjs and the others cover each call in
// depth, here the named door.
import fs from 'node:fs'
import { once } from 'node:events'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import engine from '../../lib/engine/index.js'
import { native } from '../../lib/engine/binding.js'
import { makeTempDir, openFdCount, removeTempDir } from '../support/files.mjs'

const CALLS = { openBeneath: 'openBeneath', lookupBeneath: 'lookupBeneath', closeFd: 'close', changesPending: 'changesPending', setCork: 'setCork', socketRoom: 'socketRoom', trimMemory: 'trimMemory', idlePriority: 'idlePriority', probeKernel: 'probeKernel' }

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
    const before = openFdCount()
    const rootFd = fs.openSync(path.join(dir, 'root'), 'r')
    try {
      const opened = await engine.openBeneath(rootFd, 'inside.txt')
      expect(fs.readFileSync(opened.fd, 'utf8')).toBe('inside')
      engine.closeFd(opened.fd)
      await expect(engine.openBeneath(rootFd, '../outside.txt')).rejects.toMatchObject({ code: 'EXDEV' })
    } finally {
      fs.closeSync(rootFd)
    }
    expect(openFdCount()).toBe(before)
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
