'use strict'

// The folder compressed variants are written to, made safe in a shared temp
// folder (/tmp is writable by every user):
// - the base folder (one per user by default) is created with mode 0700; one
//   that is there already is used only if it is a real directory (not a
//   symbolic link), owned by this user and writable by nobody else. Otherwise
//   (say, another user made it first) a fresh private one is made with mkdtemp;
// - each store writes below it in a folder of its own, `v-<pid>-<random>`,
//   created by mkdir (which fails rather than reuse anything) with mode 0700;
//   the folders of processes that are gone are removed first (stale entries
//   from a crash or a kill), and a store removes its own when it closes, or,
//   never closed, when the process exits (an 'exit' listener, synchronous:
//   a process killed by a signal leaves its folder to the next start's sweep);
// - whether a folder's process is alive is not read from the pid in its name
//   (in a container the server is pid 1 on every start, and /tmp may outlive
//   it): the process listens on a Unix socket in its folder, `s` (unref'd; the
//   kernel closes it with the process, however it ends), and the sweep
//   connects to it: refused, or no socket, means gone. A pathname socket is
//   found by its inode, so this holds across pid namespaces sharing /tmp.
//   Where the socket's path would not fit in sun_path (SOCKET_PATH_MAX), the
//   folder holds `owner` instead: pid, start time (/proc/PID/stat) and boot
//   id, all three of which must match. A folder with neither (being made, or
//   left by an older zcopy) is kept while it changed within MAKING_MS and the
//   pid in its name is alive;
// - a variant is written to a new temporary name opened with O_EXCL (wx,
//   0600), then renamed over its final name: a reader sees the whole file or
//   nothing, and an error (disk full, read-only) leaves nothing behind.

const crypto = require('node:crypto')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')

const PREFIX = 'v-'
const SOCKET = 's' // the live process's socket in its folder
const OWNER = 'owner' // or, where that path is too long, who made it
const SOCKET_PATH_MAX = process.platform === 'linux' ? 107 : 103 // sun_path, less its NUL
const MAKING_MS = 60_000 // a folder with neither, changed this recently, is being made

// A directory (not a link) of this user's that nobody else may write to
// (`private`: nor read).
function ownerOk (stat, { private: closed = false } = {}) {
  const uid = typeof process.getuid === 'function' ? process.getuid() : stat.uid
  return stat.isDirectory() && stat.uid === uid && (stat.mode & (closed ? 0o077 : 0o022)) === 0
}

// → Promise of a base folder that is this user's own: `base` when it is safe.
async function safeBase (base) {
  try {
    await fsp.mkdir(base, { recursive: false, mode: 0o700 })
  } catch (err) {
    if (err.code === 'ENOENT') {
      await fsp.mkdir(path.dirname(base), { recursive: true, mode: 0o700 })
      return safeBase(base)
    }
    if (err.code !== 'EEXIST') throw err
  }
  const stat = await fsp.lstat(base)
  if (ownerOk(stat)) return { base, replaced: false }
  // Not ours (or a link, or open to others): never written into.
  return { base: await fsp.mkdtemp(path.join(os.tmpdir(), 'zcopy-variants-')), replaced: true }
}

// → Promise of whether something accepts connections on the socket `file`
// (refused or missing: no; anything else, a full backlog say: yes, kept).
function answers (file) {
  return new Promise((resolve) => {
    const socket = net.connect(file)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', (err) => resolve(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT' && err.code !== 'ENOTSOCK'))
  })
}

function pidAlive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

// → `pid start-time boot-id` of process `pid` ('self' for this one); null
// where /proc cannot tell.
function identityOf (pid) {
  try {
    const start = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    return `${pid === 'self' ? process.pid : pid} ${start} ${boot}`
  } catch {
    return null
  }
}

// → Promise of whether the store folder `dir` belongs to a live process.
async function folderAlive (dir) {
  const socket = await fsp.lstat(path.join(dir, SOCKET)).catch(() => null)
  if (socket !== null) return socket.isSocket() && answers(path.join(dir, SOCKET))
  const owner = await fsp.readFile(path.join(dir, OWNER), 'utf8').catch(() => null)
  if (owner !== null) {
    const pid = Number(owner.split(' ')[0])
    return owner.includes(' ') ? identityOf(pid) === owner : pidAlive(pid) // written where /proc could not tell
  }
  const stat = await fsp.lstat(dir).catch(() => null)
  return stat !== null && Date.now() - stat.mtimeMs < MAKING_MS && pidAlive(Number(/^v-(\d+)-/.exec(path.basename(dir))[1]))
}

// Removes the folders of stores whose process is gone. → Promise of how many.
async function removeStale (base) {
  let removed = 0
  for (const name of await fsp.readdir(base)) {
    const dir = path.join(base, name)
    if (!/^v-\d+-[0-9a-f]+$/.test(name) || live.has(dir) || await folderAlive(dir)) continue
    await fsp.rm(dir, { recursive: true, force: true }).then(() => removed++, () => {})
  }
  return removed
}

// Marks `dir` as this process's while it lives: → Promise of the socket's
// server (closed by removeStoreDir()), or null where `owner` is written instead.
// (A file system that has no sockets: `owner` too.)
async function holdFolder (dir) {
  const file = path.join(dir, SOCKET)
  if (Buffer.byteLength(file) <= SOCKET_PATH_MAX) {
    const server = net.createServer((socket) => socket.destroy())
    const listening = await new Promise((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(file, () => resolve(true))
    })
    if (listening) {
      server.unref()
      return server
    }
  }
  await fsp.writeFile(path.join(dir, OWNER), identityOf('self') || String(process.pid), { mode: 0o600, flag: 'wx' })
  return null
}

// This process's store folders not removed yet → { withBase (their base goes
// too once empty), held (Promise of holdFolder()'s server) }; removed
// synchronously when the process exits.
const live = new Map()
let exitListener = false

function removeLiveSync () {
  for (const [dir, { withBase }] of live) {
    try { fs.rmSync(dir, { recursive: true, force: true }) } catch {}
    if (withBase) try { fs.rmdirSync(path.dirname(dir)) } catch {}
  }
  live.clear()
}

function track (dir, withBase, held) {
  live.set(dir, { withBase, held })
  if (!exitListener) {
    exitListener = true
    process.on('exit', removeLiveSync)
  }
}

const BASE_RACES = 8 // times the base may vanish under a store being made before that is an error

// → Promise of { dir, base, replaced, stale }: a new private folder for one store.
// The last store of another process removes the base when it closes, at any
// point of this (after the mkdir, during the readdir): ENOENT starts again.
// `ownsBase`: `base` is zcopy's (the default), removed once empty (a base made
// in its place, `replaced`, always is). The folder is removed when the process
// exits unless removeStoreDir() was called first.
async function makeStoreDir (base, { ownsBase = false } = {}, attempt = 1) {
  try {
    const safe = await safeBase(base)
    const stale = await removeStale(safe.base)
    const dir = path.join(safe.base, `${PREFIX}${process.pid}-${crypto.randomBytes(6).toString('hex')}`)
    await fsp.mkdir(dir, { mode: 0o700 })
    const held = holdFolder(dir)
    track(dir, ownsBase || safe.replaced, held.catch(() => null))
    const stat = await fsp.lstat(dir)
    if (!ownerOk(stat, { private: true })) throw new Error(`${dir} is not a private folder of this user`)
    await held
    return { dir, base: safe.base, replaced: safe.replaced, stale }
  } catch (err) {
    if (err.code === 'ENOENT' && attempt < BASE_RACES) return makeStoreDir(base, { ownsBase }, attempt + 1)
    throw err
  }
}

// Removes a store's folder, and (`withBase`) its base when that is then empty
// (another store still in it keeps it: rmdir fails, quietly). → Promise.
async function removeStoreDir (dir, withBase) {
  const own = live.get(dir)
  live.delete(dir)
  const server = own === undefined ? null : await own.held
  if (server !== null) await new Promise((resolve) => server.close(resolve))
  await fsp.rm(dir, { recursive: true, force: true }).catch(() => {})
  if (withBase) await fsp.rmdir(path.dirname(dir)).catch(() => {})
}

let temporaries = 0

// Writes `bytes` to `file` whole or not at all. → Promise of the final file's
// fs.Stats (after the rename, which changes its ctime).
async function writeAtomically (file, bytes) {
  const temporary = `${file}.${process.pid}.${++temporaries}.tmp`
  let handle = null
  try {
    handle = await fsp.open(temporary, 'wx', 0o600)
    let written = 0
    while (written < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written)
      written += bytesWritten
    }
    await handle.close()
    handle = null
    await fsp.rename(temporary, file)
    return await fsp.stat(file)
  } catch (err) {
    if (handle !== null) await handle.close().catch(() => {})
    await fsp.unlink(temporary).catch(() => {})
    throw err
  }
}

module.exports = { makeStoreDir, removeStale, removeStoreDir, safeBase, writeAtomically }
