'use strict'

// --listing: a folder without an index.html, as an HTML page (see
// listing-page.js) or as JSON for a client that prefers application/json,
// sorted as ?sort= and &order= ask (see listing-order.js). Only what zcopy
// serve would serve is listed: names starting with '.' only with --dotfiles
// allow, regular files and folders only (no FIFOs, sockets, devices), and
// nothing whose real path is outside the served folder (a symlink out of it is
// refused, so not shown).
// Built off the event loop and capped (see LIMIT): a huge folder delays only
// the requests for it.

const fsp = require('node:fs/promises')
const path = require('node:path')
const Negotiator = require('negotiator')
const { splitUrl } = require('../../../lib/http')
const { byTypeThenName, orderOf, sortEntries } = require('./listing-order')
const { renderPage, CONTENT_SECURITY_POLICY } = require('./listing-page')

// A listing shows the first LIMIT entries (folders first, by name) and says how
// many there are: a folder of 50,000 entries is not rendered whole. Sorting by
// size or date orders those entries (it does not stat the whole folder).
const LIMIT = 1000
// At most this many file system calls of one listing run at once.
const CONCURRENCY = 16
// Folders whose sorted names are remembered (by their mtime and ctime).
const CACHED_FOLDERS = 32

function isInside (realRoot, real) {
  return real === realRoot || real.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep)
}

function realOrNull (file) {
  return fsp.realpath(file).catch(() => null)
}

function statOrNull (file) {
  return fsp.stat(file).catch(() => null)
}

// `work(item)` for every item, at most CONCURRENCY at once; → the results in order.
async function mapBounded (items, work) {
  const results = new Array(items.length)
  let next = 0
  async function lane () {
    while (next < items.length) {
      const at = next++
      results[at] = await work(items[at])
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, lane))
  return results
}

// The folder a request path names, or null when there is none to list: a bad
// encoding, a '..' or a refused dotfile segment, not a folder, outside the root.
async function folderOf (root, pathname, dotfiles) {
  if (!pathname.endsWith('/')) return null
  let decoded
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return null
  }
  if (decoded.includes('\0')) return null
  const segments = decoded.split('/').filter(Boolean)
  if (segments.some((segment) => segment === '..' || segment.includes('\\'))) return null
  if (dotfiles !== 'allow' && segments.some((segment) => segment.startsWith('.'))) return null
  const [realRoot, real] = await Promise.all([realOrNull(root), realOrNull(path.join(root, ...segments))])
  if (realRoot === null || real === null || !isInside(realRoot, real)) return null
  const stat = await statOrNull(real)
  return stat !== null && stat.isDirectory() ? { real, realRoot, decoded, version: `${stat.mtimeMs}:${stat.ctimeMs}` } : null
}

function isSpecial (dirent) {
  return dirent.isFIFO() || dirent.isSocket() || dirent.isBlockDevice() || dirent.isCharacterDevice()
}

// A symbolic link (or an entry whose type the file system did not give) is
// listed as what it points to, when that is inside the root.
async function typeOf ({ real, realRoot }, dirent) {
  if (dirent.isDirectory()) return 'directory'
  if (dirent.isFile()) return 'file'
  if (isSpecial(dirent)) return null
  const target = await realOrNull(path.join(real, dirent.name))
  if (target === null || !isInside(realRoot, target)) return null
  const stat = await statOrNull(target)
  return stat === null ? null : stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : null
}

// → { names: [{ name, type }] sorted, the first LIMIT; total }. Read in batches
// off the event loop (fs.opendir); only links cost a call each.
async function namesOf (found, dotfiles) {
  const dirents = []
  const dir = await fsp.opendir(found.real, { bufferSize: 256 })
  for await (const dirent of dir) {
    if (dotfiles === 'allow' || !dirent.name.startsWith('.')) dirents.push(dirent)
  }
  const types = await mapBounded(dirents, (dirent) => typeOf(found, dirent))
  const names = []
  for (let i = 0; i < dirents.length; i++) {
    if (types[i] !== null) names.push({ name: dirents[i].name, type: types[i] })
  }
  return { names: names.sort(byTypeThenName).slice(0, LIMIT), total: names.length }
}

// The sorted names of a folder, remembered while its mtime and ctime stay the
// same (an entry added, removed or renamed changes them); one build at a time
// per folder, shared by the requests that wait for it.
const cached = new Map() // real folder + dotfiles → { version, names: Promise }

function cachedNamesOf (found, dotfiles) {
  const key = `${dotfiles}:${found.real}`
  const hit = cached.get(key)
  if (hit !== undefined && hit.version === found.version) {
    cached.delete(key)
    cached.set(key, hit) // most recently used last
    return hit.names
  }
  const names = namesOf(found, dotfiles)
  cached.set(key, { version: found.version, names })
  names.catch(() => cached.delete(key))
  if (cached.size > CACHED_FOLDERS) cached.delete(cached.keys().next().value)
  return names
}

// → { entries: [{ name, type, size, mtime }], total, truncated }. Sizes and dates are
// read on every request (only the names are remembered).
async function entriesOf (found, dotfiles) {
  const { names, total } = await cachedNamesOf(found, dotfiles)
  const stats = await mapBounded(names, ({ name }) => statOrNull(path.join(found.real, name)))
  const entries = []
  for (let i = 0; i < names.length; i++) {
    const { name, type } = names[i]
    const stat = stats[i]
    if (stat === null) continue
    if (type === 'directory' && stat.isDirectory()) entries.push({ name, type, size: null, mtime: stat.mtime.toISOString() })
    else if (type === 'file' && stat.isFile()) entries.push({ name, type, size: stat.size, mtime: stat.mtime.toISOString() })
  }
  return { entries, total, truncated: names.length < total }
}

// → Promise<true> when the request was for a listable folder and has been answered.
async function sendListing (req, res, root, pathname, dotfiles) {
  const found = await folderOf(root, pathname, dotfiles)
  if (found === null) return false
  let listed
  try {
    listed = await entriesOf(found, dotfiles)
  } catch {
    return false
  }
  const order = orderOf(splitUrl(req.url).query)
  const entries = sortEntries(listed.entries, order)
  const json = new Negotiator(req).mediaType(['text/html', 'application/json']) === 'application/json'
  const body = json
    ? JSON.stringify({ path: found.decoded, total: listed.total, truncated: listed.truncated, entries, ...order }) + '\n'
    : renderPage(found.decoded, { ...listed, entries, limit: LIMIT }, order)
  res.statusCode = 200
  res.setHeader('Content-Type', json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8')
  if (!json) res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY)
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Cache-Control', 'no-cache')
  res.setHeader('Vary', 'Accept')
  res.end(req.method === 'HEAD' ? undefined : body)
  return true
}

module.exports = { sendListing }
