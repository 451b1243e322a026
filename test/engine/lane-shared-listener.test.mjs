// The native lane's shared listener (src/lane.cc): Lane.bind makes a listening
// socket that no lane polls (a --workers primary's), and a lane's adopt(fd)
// accepts from it (each worker's). Bad input is a TypeError, a descriptor that
// is no listening socket a Node-style error, and then still the caller's.
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import engine from '../../lib/engine/index.js'

const OPTIONS = { keepAliveMs: 5000, keepAliveLine: '', idleMs: 60000 }
const isOpen = (fd) => fs.existsSync(`/proc/self/fd/${fd}`)
const flagsOf = (fd) => parseInt(/^flags:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'))[1], 8)
const O_CLOEXEC = 0o2000000
const O_NONBLOCK = 0o4000

describe.runIf(native !== null && process.platform === 'linux')('Lane.bind and lane.adopt(fd)', () => {
  test('bind: a listening, non-blocking, close-on-exec socket; its port taken: EADDRINUSE, as Node says it', () => {
    const { fd, port } = engine.Lane.bind('127.0.0.1', 0, false)
    try {
      expect(port).toBeGreaterThan(0)
      expect(fs.readlinkSync(`/proc/self/fd/${fd}`)).toMatch(/^socket:\[\d+\]$/)
      expect(flagsOf(fd) & (O_CLOEXEC | O_NONBLOCK)).toBe(O_CLOEXEC | O_NONBLOCK)
      let error
      try {
        engine.Lane.bind('127.0.0.1', port, false)
      } catch (err) {
        error = err
      }
      expect(error).toMatchObject({ code: 'EADDRINUSE', errno: -os.constants.errno.EADDRINUSE, syscall: 'bind' })
    } finally {
      engine.closeFd(fd)
    }
    expect(() => engine.Lane.bind(1, 0, false)).toThrow(TypeError)
    expect(() => engine.Lane.bind('127.0.0.1')).toThrow(TypeError)
  })

  test('adopt: the lane accepts from the socket, hands a connection it cannot answer to JavaScript, closes it on destroy', async () => {
    const { fd, port } = engine.Lane.bind('127.0.0.1', 0, false)
    const handed = []
    const other = new engine.Lane(() => {}, OPTIONS)
    let notListening
    const lane = new engine.Lane((connection, bytes) => {
      handed.push(bytes.toString('latin1'))
      // A socket that does not listen: refused, and still open here.
      try {
        other.adopt(connection)
      } catch (err) {
        notListening = { code: err.code, syscall: err.syscall, open: isOpen(connection) }
      }
      engine.closeFd(connection)
    }, OPTIONS)
    try {
      expect(lane.adopt(fd)).toBe(port)
      expect(() => lane.adopt(fd)).toThrow(/listens already/)
      const client = net.connect(port, '127.0.0.1')
      await once(client, 'connect')
      client.write('GET /missing HTTP/1.1\r\nHost: x\r\n\r\n')
      client.resume()
      await once(client, 'close')
      expect(handed).toEqual(['GET /missing HTTP/1.1\r\nHost: x\r\n\r\n'])
      expect(notListening).toEqual({ code: 'EINVAL', syscall: 'getsockopt', open: true })
    } finally {
      lane.destroy()
      other.destroy()
    }
    for (let i = 0; i < 100 && isOpen(fd); i++) await sleep(10) // closed from the handle's close callback
    expect(isOpen(fd)).toBe(false)
  })

  test('adopt of what is no listening socket: a Node-style error, the descriptor still the caller\'s', () => {
    const lane = new engine.Lane(() => {}, OPTIONS)
    const file = path.join(os.tmpdir(), `zcopy-adopt-${process.pid}`)
    const fd = fs.openSync(file, 'w')
    try {
      expect(() => lane.adopt('3')).toThrow(TypeError)
      expect(() => lane.adopt(-1)).toThrow(TypeError)
      expect(() => lane.adopt(fd)).toThrow(expect.objectContaining({ code: 'ENOTSOCK', syscall: 'getsockopt' }))
      expect(isOpen(fd)).toBe(true)
      expect(() => lane.adopt(2 ** 30)).toThrow(expect.objectContaining({ code: 'EBADF', syscall: 'getsockopt' }))
    } finally {
      fs.closeSync(fd)
      fs.rmSync(file, { force: true })
      lane.destroy()
    }
  })
})
