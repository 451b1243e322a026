// Every synchronous fs call in lib/, each with the reason it may block the event
// loop (or why it cannot). A new one fails this test until it is listed here
// with its reason, so that no blocking call reaches a request path unseen.
//
// What runs per request on a path that is not remembered yet (a miss; a hit
// makes no system call at all): the name lookups (stat of the path, its index
// or extension candidates and precompressed siblings; lstat when remembering),
// as nginx's open_file_cache does them in its worker: a lookup in the dentry
// cache costs about a microsecond, a thread-pool round trip ten or more. The
// open itself goes to the pool (openat2), the fstat of the opened descriptor
// reads the in-memory inode. On a network file system a stat may wait for the
// server: docs/http.md says so.
import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { jsFilesUnder } from '../support/files.mjs'
import { repo } from '../support/pack.mjs'

const ALLOWED = {
  'lib/adapters/fastify/options.js': { statSync: 'at registration: is `root` a directory (as @fastify/static checks it)' },
  'lib/http/descriptor-limit.js': { readFileSync: 'once per process: /proc/self/limits (procfs, never on disk)' },
  'lib/http/dir-watches.js': { statfsSync: 'once per watched directory: does inotify vouch for it (remote file systems)' },
  'lib/http/file-cache.js': { lstatSync: 'a miss being remembered: is the name itself a symlink (dentry cache)' },
  'lib/http/http-error.js': { statSync: 'once at load (does this Node hide ENOTDIR); on a 404, which of ENOENT/ENOTDIR it was (dentry cache)' },
  'lib/http/locate-file.js': { statSync: 'a miss: the path, its index or extension candidates (dentry cache, as nginx)' },
  'lib/http/open-confined.js': {
    closeSync: 'a descriptor: close(2) of a regular file or directory never waits for the disk',
    fstatSync: 'an open descriptor: the inode is in memory',
    openSync: 'a directory with O_DIRECTORY (never a FIFO): a root, once per identity; one about to be redirected to',
    readlinkSync: '/proc/self/fd links: procfs, in memory',
    statSync: 'a miss: the root\'s name, has it been swapped (a deploy symlink); dentry cache'
  },
  'lib/http/stat.js': { statSync: 'a miss with precompressed: the .br/.gz siblings (dentry cache)' },
  'lib/pipe-file.js': { fstatSync: 'an open descriptor: the inode is in memory' }
}

function syncCalls () {
  const found = {}
  for (const file of jsFilesUnder(path.join(repo, 'lib'))) {
    const names = [...fs.readFileSync(file, 'utf8').matchAll(/\b([a-zA-Z]+Sync)\(/g)].map((m) => m[1])
    if (names.length) found[path.relative(repo, file).split(path.sep).join('/')] = [...new Set(names)].sort()
  }
  return found
}

it('lib/ makes only the synchronous fs calls listed here, each with its reason', () => {
  const allowed = Object.fromEntries(Object.entries(ALLOWED).map(([file, calls]) => [file, Object.keys(calls).sort()]))
  expect(syncCalls()).toEqual(allowed)
})
