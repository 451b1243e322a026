'use strict'

// `list.extendedFolderInfo`: the totals of a listed folder's subfolders, as
// @fastify/static computes them (names looked up with stat, so symbolic links
// are followed; its fileCount and folderCount count the whole tree, as its
// totals do; lastModified the newest file's mtimeMs), with bounds it lacks:
//
// - A directory already on the walk's path from the subfolder (the same device
//   and inode: `loop -> .`, `up -> ..`) is counted as a folder and not entered:
//   a link loop is never followed.
// - A subfolder's walk enters no more than MAX_DEPTH nested folders (the
//   subfolder itself the first; what the last holds is counted), and one
//   listing reads and looks up no more than MAX_ENTRIES directories and names in
//   all its walks (about 0.5 s of file-system calls at worst). Past either, the
//   figures stop there and say so: `partial: true` (absent when the figures are
//   complete, as @fastify/static's never carry it).
// - One listing has at most CONCURRENCY stat calls in flight (libuv's pool has
//   4 threads by default), and its walks run one after another.
//
// A directory that cannot be read fails the listing (not found), as in
// @fastify/static; a name that cannot be looked up is skipped.

const fs = require('node:fs/promises')
const path = require('node:path')

const MAX_DEPTH = 32
const MAX_ENTRIES = 10_000
const CONCURRENCY = 4

// Runs `fn(index)` for each index below `count`, at most CONCURRENCY at once.
// → Promise.
async function eachBounded (count, fn) {
  let next = 0
  const worker = async () => {
    while (next < count) await fn(next++)
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker))
}

const idOf = (stats) => `${stats.dev}:${stats.ino}`

// The walks of one listing: they share its budget of names to look up.
class FolderWalks {
  constructor () {
    this.left = MAX_ENTRIES
  }

  // → Promise of the extended info of the folder `dir`, whose stat is `stats`.
  async infoOf (dir, stats) {
    const info = { totalSize: 0, fileCount: 0, totalFileCount: 0, folderCount: 0, totalFolderCount: 0, lastModified: 0 }
    if (await this.walk(dir, info, 1, new Set([idOf(stats)]))) info.partial = true
    return info
  }

  // Adds what `dir`, the `depth`th folder entered on the walk, holds to `info`;
  // `ancestors`: the ids of the directories on the path to it, itself included.
  // → Promise of whether something was left out.
  async walk (dir, info, depth, ancestors) {
    if (this.left === 0) return true
    this.left-- // the directory read
    let names = await fs.readdir(dir)
    let partial = false
    if (names.length > this.left) {
      names = names.slice(0, this.left)
      partial = true
    }
    this.left -= names.length
    const subfolders = new Array(names.length)
    await eachBounded(names.length, async (index) => {
      const file = path.join(dir, names[index])
      let stats
      try {
        stats = await fs.stat(file)
      } catch {
        return
      }
      if (stats.isDirectory()) {
        info.totalFolderCount++
        info.folderCount++
        subfolders[index] = { file, id: idOf(stats) }
      } else {
        info.totalSize += stats.size
        info.totalFileCount++
        info.fileCount++
        info.lastModified = Math.max(info.lastModified, stats.mtimeMs)
      }
    })
    for (const subfolder of subfolders) {
      if (subfolder === undefined || ancestors.has(subfolder.id)) continue // a file, or a link back up the path
      if (depth >= MAX_DEPTH) {
        partial = true
        continue
      }
      ancestors.add(subfolder.id)
      if (await this.walk(subfolder.file, info, depth + 1, ancestors)) partial = true
      ancestors.delete(subfolder.id)
    }
    return partial
  }
}

module.exports = { CONCURRENCY, FolderWalks, MAX_DEPTH, MAX_ENTRIES, eachBounded }
