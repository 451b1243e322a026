// zcopy serve --native-lane --workers 2: the primary listens once (through the
// addon) and every worker's lane accepts from that one socket. What the kernel
// says is the proof: which processes hold the listening socket and which one
// holds a served connection (/proc/<pid>/fd and /proc/net/tcp), and that a
// worker's lane holds its own descriptor of a file it replays (the answer
// table's dup). With ZCOPY_NATIVE=0 (no addon) the lane is off, said in one
// line, and the workers serve through Node's stack as without --native-lane.
import fs from 'node:fs'
import net from 'node:net'
import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { native } from '../../lib/engine/binding.js'
import { runCli, waitForStdout } from './cli.mjs'
import { exchange, makeRoot, portOf, startServe, withoutDate } from './serve-helpers.mjs'

// More than loopback's socket buffers hold: the lane's sendfile meets EAGAIN.
const huge = Buffer.alloc(16 * 1024 * 1024, 'h')
const root = makeRoot({
  'a.txt': 'alpha\n',
  'b.txt': 'bravo\n',
  'huge.bin': huge,
  'docs/readme.txt': 'docs\n'
})
const ARGS = ['--no-compress', '--listing', '--quiet']
const OFF = /^zcopy: --native-lane off: the native addon is not loaded$/m
let lane
let plain
let workers // the lane server's worker pids, as its start line lists them
beforeAll(async () => {
  [lane, plain] = await Promise.all([
    startServe(root, ['--native-lane', '--workers', '2', ...ARGS]),
    startServe(root, ['--no-native-lane', ...ARGS])
  ])
  workers = (await waitForStdout(lane.cli, /^ {2}workers: (\d+ \d+)$/m))[1].split(' ').map(Number)
})
afterAll(async () => {
  await Promise.all([lane, plain].filter(Boolean).map((server) => server.stop()))
  fs.rmSync(root, { recursive: true, force: true })
})

// A kept-alive connection that has had one answer to `GET path`: → { socket,
// head } (the body is read and dropped).
async function keptAlive (server, path) {
  const socket = net.connect(portOf(server), '127.0.0.1')
  await once(socket, 'connect')
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
  let bytes = Buffer.alloc(0)
  let head = null
  let left = 0
  while (head === null || left > 0) {
    const [chunk] = await once(socket, 'data')
    if (head !== null) {
      left -= chunk.length
      continue
    }
    bytes = Buffer.concat([bytes, chunk])
    const end = bytes.indexOf('\r\n\r\n')
    if (end < 0) continue
    head = bytes.subarray(0, end).toString('latin1')
    left = Number(/\r\nContent-Length: (\d+)/i.exec(head)[1]) - (bytes.length - end - 4)
  }
  return { socket, head }
}

// The inodes of the sockets `pid` holds, one per descriptor (a socket held
// twice counts twice).
function socketInodes (pid) {
  const inodes = []
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let target
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue // closed meanwhile
    }
    const match = /^socket:\[(\d+)\]$/.exec(target)
    if (match) inodes.push(match[1])
  }
  return inodes
}

// The TCP sockets of this machine: { localPort, remotePort, listening, inode }.
function tcpSockets () {
  const sockets = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'latin1').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields.length < 10) continue
      const port = (address) => parseInt(address.split(':')[1], 16)
      sockets.push({ localPort: port(fields[1]), remotePort: port(fields[2]), listening: fields[3] === '0A', inode: fields[9] })
    }
  }
  return sockets
}

const listeningInode = (server) => tcpSockets().filter((s) => s.listening && s.localPort === portOf(server)).map((s) => s.inode)

// Which of `pids` holds the server's end of `socket`.
function holderOf (server, socket, pids) {
  const end = tcpSockets().find((s) => !s.listening && s.localPort === portOf(server) && s.remotePort === socket.localPort)
  return pids.filter((pid) => socketInodes(pid).includes(end.inode))
}

// How many descriptors of `pid` are open on `file`: the open-file cache holds
// one, the lane's answer table its own dup of it.
const descriptorsOn = (pid, file) => fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
  try {
    return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === file
  } catch {
    return false
  }
}).length

// Runs `work` with every worker but `pid` stopped (SIGSTOP): what is accepted
// meanwhile, only `pid` can have accepted.
async function withOnly (pid, work) {
  const others = workers.filter((other) => other !== pid)
  for (const other of others) process.kill(other, 'SIGSTOP')
  try {
    return await work()
  } finally {
    for (const other of others) process.kill(other, 'SIGCONT')
  }
}

const CASES = {
  'a GET, then Connection: close': 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
  HEAD: 'HEAD /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
  404: 'GET /nope.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
  'a listing': 'GET /docs/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
  'HTTP/1.0': 'GET /b.txt HTTP/1.0\r\n\r\n',
  'pipelined, then a miss': 'GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /b.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' +
    'GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
}

describe('zcopy serve --native-lane --workers 2', () => {
  test('the start line says whether the lane is on', () => {
    expect(lane.cli.stdout()).toMatch(native === null ? /\(zero-copy off: stream fallback, 2 workers\)/ : /\(zero-copy on, native lane, 2 workers\)/)
    if (native === null) expect(lane.cli.stderr()).toMatch(OFF)
    else expect(lane.cli.stderr()).toBe('')
  })

  for (const [name, request] of Object.entries(CASES)) {
    test(`${name}: the same bytes as one process without the lane, but for Date`, async () => {
      // Each worker learns an answer when Node gives it: a few rounds, so that
      // both are likely to have replayed some.
      for (let i = 0; i < 4; i++) {
        const [withLane, without] = await Promise.all([exchange(lane, [request]), exchange(plain, [request])])
        expect(without.length).toBeGreaterThan(0)
        expect(withoutDate(withLane)).toBe(withoutDate(without))
      }
    })
  }

  test('a port in use: one line, exit code 1, as without the lane', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    try {
      const { port } = blocker.address()
      const { code, stdout, stderr } = await runCli(['serve', root, '--native-lane', '--workers', '2', '--port', String(port)])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      const line = `zcopy: port ${port} is already in use on 127.0.0.1; choose another port, or -p 0 for any free one\n`
      expect(stderr).toBe((native === null ? 'zcopy: --native-lane off: the native addon is not loaded\n' : '') + line)
    } finally {
      blocker.close()
    }
  })

  test('$PORT in use: another port, said once, served by the workers', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1')
    await once(blocker, 'listening')
    const { port } = blocker.address()
    let server
    try {
      server = await startServe(root, ['--native-lane', '--workers', '2', ...ARGS], { env: { PORT: String(port) }, port: [] })
      expect(portOf(server)).not.toBe(port)
      expect(server.cli.stdout().match(/is taken; using/g)).toEqual(['is taken; using'])
      expect(server.cli.stdout()).toContain(`zcopy: port ${port} is taken; using ${portOf(server)} instead\n`)
      expect(withoutDate(await exchange(server, [CASES.HEAD]))).toBe(withoutDate(await exchange(plain, [CASES.HEAD])))
    } finally {
      blocker.close()
      if (server) expect((await server.stop()).code).toBe(0)
    }
  })

  test('NODE_CLUSTER_SCHED_POLICY=rr (the primary accepts): the lane is off, said in one line', async () => {
    const server = await startServe(root, ['--native-lane', '--workers', '2', ...ARGS], { env: { NODE_CLUSTER_SCHED_POLICY: 'rr' } })
    try {
      expect(server.cli.stdout()).not.toMatch(/native lane/)
      expect(server.cli.stderr()).toMatch(native === null ? OFF : /^zcopy: --native-lane off: NODE_CLUSTER_SCHED_POLICY=rr hands connections out through Node's stack$/m)
      expect(server.cli.stderr().trimEnd().split('\n')).toHaveLength(1)
      expect(withoutDate(await exchange(server, [CASES.HEAD]))).toBe(withoutDate(await exchange(plain, [CASES.HEAD])))
    } finally {
      expect((await server.stop()).code).toBe(0)
    }
  })

  describe.runIf(native !== null && process.platform === 'linux')('what the kernel says', () => {
    test('one listening socket: the primary bound it, every worker holds it, the primary holds no other', () => {
      const [inode] = listeningInode(lane)
      expect(listeningInode(lane)).toEqual([inode])
      const tcp = new Set(tcpSockets().map((s) => s.inode))
      expect(socketInodes(lane.cli.child.pid).filter((i) => tcp.has(i))).toEqual([inode])
      for (const pid of workers) expect(socketInodes(pid).filter((i) => i === inode)).toHaveLength(1)
    })

    // Each worker alone (the other stopped) takes new connections: its lane
    // accepts from the shared socket (the primary never does), learns the
    // answer from Node and holds the file for its replays.
    test('every worker accepts, and its lane replays', async () => {
      for (const pid of workers) {
        await withOnly(pid, async () => {
          for (const path of ['/a.txt', '/a.txt', '/huge.bin']) {
            const { socket, head } = await keptAlive(lane, path)
            expect(holderOf(lane, socket, [lane.cli.child.pid, ...workers])).toEqual([pid])
            expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
            socket.destroy()
          }
          expect(descriptorsOn(pid, `${fs.realpathSync(root)}/a.txt`)).toBeGreaterThanOrEqual(2)
        })
      }
    })

    test('a primary stopped (SIGSTOP): new connections are served', async () => {
      process.kill(lane.cli.child.pid, 'SIGSTOP')
      try {
        for (let i = 0; i < 4; i++) expect(withoutDate(await exchange(lane, [CASES.HEAD]))).toBe(withoutDate(await exchange(plain, [CASES.HEAD])))
      } finally {
        process.kill(lane.cli.child.pid, 'SIGCONT')
      }
    })

    test('a worker killed (SIGKILL) is replaced, and the new one\'s lane accepts and replays', async () => {
      const [killed, kept] = workers
      process.kill(killed, 'SIGKILL')
      const pattern = new RegExp(`^zcopy: worker ${killed} killed by SIGKILL; started worker (\\d+)$`, 'm')
      const replacement = Number((await waitForStdout(lane.cli, pattern))[1])
      await waitForStdout(lane.cli, new RegExp(`^zcopy: worker ${replacement} listening$`, 'm'))
      workers = [replacement, kept]
      const [inode] = listeningInode(lane)
      expect(socketInodes(replacement).filter((i) => i === inode)).toHaveLength(1)
      await withOnly(replacement, async () => {
        for (const path of ['/a.txt', '/a.txt']) {
          const { socket, head } = await keptAlive(lane, path)
          expect(holderOf(lane, socket, [lane.cli.child.pid, ...workers])).toEqual([replacement])
          expect(head).toMatch(/\r\nContent-Length: 6$/m)
          socket.destroy()
        }
        expect(descriptorsOn(replacement, `${fs.realpathSync(root)}/a.txt`)).toBeGreaterThanOrEqual(2)
      })
      // The primary forked again and still holds one TCP socket, the listening one.
      const tcp = new Set(tcpSockets().map((s) => s.inode))
      expect(socketInodes(lane.cli.child.pid).filter((i) => tcp.has(i))).toEqual([inode])
    })

    test('SIGTERM: every worker stops, a download in flight from a lane finishes, exit code 0', async () => {
      // Served by the lane of whichever worker accepts: each replays huge.bin.
      for (const pid of workers) await withOnly(pid, async () => { for (let i = 0; i < 2; i++) await exchange(lane, ['GET /huge.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n']) })
      const download = net.connect(portOf(lane), '127.0.0.1')
      await once(download, 'connect')
      download.write('GET /huge.bin HTTP/1.1\r\nHost: localhost\r\n\r\n')
      const chunks = []
      download.on('data', (chunk) => chunks.push(chunk))
      await once(download, 'data')
      download.pause() // the rest of the answer waits for room: in flight
      const idle = await keptAlive(lane, '/a.txt')
      const idleClosed = once(idle.socket, 'close')
      lane.cli.child.kill('SIGTERM')
      await idleClosed
      download.resume()
      await once(download, 'close')
      const bytes = Buffer.concat(chunks)
      expect(bytes.subarray(bytes.indexOf('\r\n\r\n') + 4).equals(huge)).toBe(true)
      const { code, stderr } = await lane.cli.output()
      expect(code).toBe(0)
      expect(stderr).toBe('')
      for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow()
      lane = null
    }, 30_000)
  })
})
