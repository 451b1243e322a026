// Every synchronous fs call in lib/ and in zcopy serve (bin/lib/serve), each with the reason it may block the event
// loop (or why it cannot). A new one fails this test until it is listed here
// with its reason, so that no blocking call reaches a request path unseen.
//
// What runs per request on a path that is not remembered yet (a miss; a hit
// makes no system call at all before the body): the name lookups (stat of the
// path, its index or extension candidates, the root's name, precompressed
// siblings; lstat and statfs when remembering) and the open go to the thread
// pool, so a stat that waits for a network file system's server waits there and
// not on the event loop. What stays synchronous works on an open descriptor (the
// inode is in memory) or on procfs.
import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { jsFilesUnder } from '../support/files.mjs'
import { repo } from '../support/pack.mjs'

const ALLOWED = {
  'bin/lib/serve/options.js': {
    closeSync: 'at start-up: a --ssl-* file read',
    fstatSync: 'at start-up: is a --ssl-* file regular (a FIFO would hang the start)',
    openSync: 'at start-up: a --ssl-* file, O_NONBLOCK',
    readFileSync: 'at start-up: a --ssl-* file'
  },
  'lib/adapters/fastify/options.js': { statSync: 'at registration: is `root` a directory (as @fastify/static checks it)' },
  'lib/http/compress/cache-dir.js': {
    readFileSync: 'procfs only (a process\'s start time, the boot id): when a store folder is made or swept, never per request',
    rmSync: "at process exit only (an 'exit' listener): the store folders not removed yet",
    rmdirSync: "at process exit only (an 'exit' listener): the emptied base folder"
  },
  'lib/http/compress/encoders.js': {
    brotliCompressSync: 'encodeSync: only in the compression process (its own session, nice 19) or a compression thread',
    gzipSync: 'encodeSync: only in the compression process (its own session, nice 19) or a compression thread',
    zstdCompressSync: 'encodeSync: only in the compression process (its own session, nice 19) or a compression thread'
  },
  'lib/http/compress/read-source.js': {
    fstatSync: 'only in the compression process or a compression thread: the source after its read',
    readAtSync: 'only in the compression process or a compression thread: the source (the engine\'s readSync loop)'
  },
  'lib/http/compress/process.js': {
    closeSync: 'in the compression process: the source it reopened',
    encodeSync: 'in the compression process (SCHED_IDLE or nice), not the server',
    openSync: 'in the compression process: the source, through /proc/PID/fd, O_NONBLOCK'
  },
  'lib/http/compress/worker.js': {
    encodeSync: 'in a compression thread of its own (nice 19), never on the event loop',
    readlinkSync: 'once per compression thread: /proc/thread-self (procfs, in memory)'
  },
  'lib/http/files/descriptor-limit.js': { readFileSync: 'once per process: /proc/self/limits (procfs, never on disk)' },
  'lib/http/files/file-cache.js': { fstatSync: 'an open descriptor, at most once a second per remembered file: the inode is in memory' },
  'lib/http/files/open-confined.js': {
    closeSync: 'a descriptor: close(2) of a regular file or directory never waits for the disk',
    fstatSync: 'an open descriptor: the inode is in memory',
    readlinkSync: '/proc/self/fd links: procfs, in memory'
  },
  'lib/engine/pipe-file.js': { fstatSync: 'an open descriptor: the inode is in memory' },
  'lib/engine/read-range.js': { readSync: 'readAtSync, whose one caller is lib/http/compress/read-source.js: the compression process or a thread' }
}

function syncCalls () {
  const found = {}
  for (const file of [...jsFilesUnder(path.join(repo, 'lib')), ...jsFilesUnder(path.join(repo, 'bin', 'lib', 'serve'))]) {
    const names = [...fs.readFileSync(file, 'utf8').matchAll(/\b([a-zA-Z]+Sync)\(/g)].map((m) => m[1])
    if (names.length) found[path.relative(repo, file).split(path.sep).join('/')] = [...new Set(names)].sort()
  }
  return found
}

it('lib/ and zcopy serve make only the synchronous fs calls listed here, each with its reason', () => {
  const allowed = Object.fromEntries(Object.entries(ALLOWED).map(([file, calls]) => [file, Object.keys(calls).sort()]))
  expect(syncCalls()).toEqual(allowed)
})
