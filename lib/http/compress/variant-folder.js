'use strict'

// The store's folder of variants too large for memory: made on first use in
// `cacheDir` (./cache-dir: private, per process, swept of those whose process is
// gone), holding at most `cacheBytes`, the least recently sent removed first by
// the store (overBudget()); removed when the store closes.

const path = require('node:path')
const fsp = require('node:fs/promises')
const { makeStoreDir, removeStoreDir, writeAtomically } = require('./cache-dir')
const { defaultCacheDir } = require('./options')

class VariantFolder {
  // `config`: compressOptions()'s; `warnOnce(message)`: the store's warning;
  // `forgetFile(file)`: drops a removed variant's file from the open-file cache.
  constructor (config, { warnOnce, forgetFile }) {
    this.config = config
    this.warnOnce = warnOnce
    this.forgetFile = forgetFile
    this.variants = new Map() // Variants on disk, least recently sent first
    this.bytes = 0
    this.removals = new Set() // Promises of the unlinks under way
    this.dir = null // Promise of the folder (null: not made yet; false: none)
    this.dirPath = null
    this.ownBase = false // the folder the store's own is in is zcopy's to remove once empty
    this.closed = false
  }

  // Writes `variant`'s bytes `out` to the folder. → Promise of whether it is
  // there (false: no folder, too big for it, or none could be made; warned
  // about). A failed write rejects.
  async put (variant, out) {
    const dir = this.config.cacheBytes < out.length ? false : await this.folder()
    if (dir === false) return false
    const written = await this.write(dir, variant.fileName(), out)
    variant.stat = written.stat
    variant.path = written.file
    this.bytes += out.length
    this.variants.set(variant, true)
    return true
  }

  // The variants to evict for the folder to hold at most `cacheBytes`, least
  // recently sent first.
  * overBudget () {
    for (const variant of this.variants.keys()) {
      if (this.bytes <= this.config.cacheBytes) return
      yield variant
    }
  }

  // `variant` was sent: the most recently used now.
  touch (variant) {
    if (variant.path === null || !this.variants.has(variant)) return
    this.variants.delete(variant)
    this.variants.set(variant, true)
  }

  // Removes `variant`'s file, if it is one of the folder's (a response still
  // sending it keeps its descriptor; the open-file cache closes it after).
  remove (variant) {
    if (variant.path === null || !this.variants.delete(variant)) return
    this.bytes -= variant.size
    this.forgetFile(variant.path)
    const removal = fsp.unlink(variant.path).catch(() => {})
    this.removals.add(removal)
    removal.then(() => this.removals.delete(removal))
  }

  // → Promise resolved once the removals under way are done.
  whenRemoved () {
    return Promise.all(this.removals).then(() => {})
  }

  // Writes `out` as `name` in the folder `dir`. → Promise of { file, stat }.
  // A folder removed meanwhile (a cleaner of /tmp, by hand) is made again,
  // once: its variants are made again as they are asked for (the store's lost()).
  async write (dir, name, out) {
    const into = async (folder) => {
      const file = path.join(folder, name)
      return { file, stat: await writeAtomically(file, out) }
    }
    try {
      return await into(dir)
    } catch (err) {
      if (err.code !== 'ENOENT' || (await fsp.stat(dir).then(() => true, () => false))) throw err
      if (this.dirPath === dir) {
        removeStoreDir(dir, false) // gone already: no longer removed at exit
        this.dir = null
        this.dirPath = null
      }
      const again = await this.folder()
      if (again === false || again === dir) throw err
      return into(again)
    }
  }

  // → Promise of the folder, made on first use, or false.
  folder () {
    if (this.config.cacheDir === false) return Promise.resolve(false)
    if (this.dir === null) {
      // The default base (per user, in the temp folder), or one mkdtemp made in
      // its place, is removed once empty.
      const ownsBase = this.config.cacheDir === defaultCacheDir()
      this.dir = makeStoreDir(this.config.cacheDir, { ownsBase }).then(({ dir, base, replaced }) => {
        this.ownBase = ownsBase || replaced
        this.dirPath = dir
        if (replaced) this.warnOnce(`${this.config.cacheDir} is not a private folder of this user's: compressed variants are kept in ${base} instead`)
        if (this.closed) removeStoreDir(dir, this.ownBase)
        return dir
      }, (err) => {
        this.warnOnce(`cannot use ${this.config.cacheDir} for compressed variants (${err.code || err.message}): larger files are sent uncompressed`)
        return false
      })
    }
    return this.dir
  }

  // Removes the folder (once the store dropped its variants). The folder is
  // made again when next needed.
  async close () {
    this.closed = true
    const dir = this.dir === null ? false : await this.dir
    if (dir !== false) await removeStoreDir(dir, this.ownBase)
    this.dir = null
    this.dirPath = null
    this.closed = false
  }
}

module.exports = { VariantFolder }
