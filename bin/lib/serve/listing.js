'use strict'

// --listing: a folder without an index.html, as a small HTML page (names
// escaped, sizes and dates, a table with headers) or as JSON for a client that
// prefers application/json. Only what zcopy serve would serve is listed:
// names starting with '.' only with --dotfiles allow, regular files and
// folders only (no FIFOs, sockets, devices), and nothing whose real path is
// outside the served folder (a symlink out of it is refused, so not shown).
// Built off the event loop and capped (see LIMIT): a huge folder delays only
// the requests for it.

const fsp = require('node:fs/promises')
const path = require('node:path')
const escapeHtml = require('escape-html')
const Negotiator = require('negotiator')
const { formatSize } = require('../../../tools/size')

// A listing shows the first LIMIT entries (folders first, by name) and says how
// many there are: a folder of 50,000 entries is not rendered whole.
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

function byTypeThenName (a, b) {
  if (a.type !== b.type) return a.type === 'directory' ? -1 : 1
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
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

function caption ({ total, truncated }) {
  const counted = `${total} ${total === 1 ? 'entry' : 'entries'}`
  return truncated ? `${counted}, the first ${LIMIT} shown` : counted
}

function renderHtml (title, listed, isRoot) {
  const { entries } = listed
  const rows = entries.map(({ name, type, size, mtime }) => {
    const href = encodeURIComponent(name) + (type === 'directory' ? '/' : '')
    const shown = escapeHtml(name) + (type === 'directory' ? '/' : '')
    const sizeCell = size === null ? '—' : `<span title="${size} bytes">${formatSize(size)}</span>`
    return `<tr><td><a href="${href}">${shown}</a></td><td>${sizeCell}</td><td><time datetime="${mtime}">${mtime.slice(0, 16).replace('T', ' ')}</time></td></tr>`
  })
  if (!isRoot) rows.unshift('<tr><td><a href="../">../</a></td><td></td><td></td></tr>')
  const heading = escapeHtml(title)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Index of ${heading}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25rem .75rem .25rem 0}td:nth-child(2),th:nth-child(2){text-align:right}a{text-decoration:none}a:hover,a:focus{text-decoration:underline}</style>
</head>
<body>
<main>
<h1>Index of ${heading}</h1>
<table>
<caption>${caption(listed)}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Modified (UTC)</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</main>
</body>
</html>
`
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
  const json = new Negotiator(req).mediaType(['text/html', 'application/json']) === 'application/json'
  const body = json
    ? JSON.stringify({ path: found.decoded, total: listed.total, truncated: listed.truncated, entries: listed.entries }) + '\n'
    : renderHtml(found.decoded, listed, found.decoded === '/')
  res.statusCode = 200
  res.setHeader('Content-Type', json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Cache-Control', 'no-cache')
  res.setHeader('Vary', 'Accept')
  res.end(req.method === 'HEAD' ? undefined : body)
  return true
}

module.exports = { sendListing }
