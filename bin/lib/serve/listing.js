'use strict'

// --listing: a folder without an index.html, as a small HTML page (names
// escaped, sizes and dates, a table with headers) or as JSON for a client that
// prefers application/json. Only what zcopy serve would serve is listed:
// names starting with '.' only with --dotfiles allow, regular files and
// folders only (no FIFOs, sockets, devices), and nothing whose real path is
// outside the served folder (a symlink out of it is refused, so not shown).

const fs = require('node:fs')
const path = require('node:path')
const escapeHtml = require('escape-html')
const Negotiator = require('negotiator')
const { formatSize } = require('../size')

function isInside (realRoot, real) {
  return real === realRoot || real.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep)
}

function realOrNull (file) {
  try {
    return fs.realpathSync(file)
  } catch {
    return null
  }
}

// The folder a request path names, or null when there is none to list: a bad
// encoding, a '..' or a refused dotfile segment, not a folder, outside the root.
function folderOf (root, pathname, dotfiles) {
  if (!pathname.endsWith('/')) return null
  let decoded
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return null
  }
  if (decoded.includes('\0')) return null
  const segments = decoded.split('/').filter(Boolean)
  if (segments.some(segment => segment === '..' || segment.includes('\\'))) return null
  if (dotfiles !== 'allow' && segments.some(segment => segment.startsWith('.'))) return null
  const folder = path.join(root, ...segments)
  const realRoot = realOrNull(root)
  const real = realOrNull(folder)
  if (realRoot === null || real === null || !isInside(realRoot, real)) return null
  try {
    return fs.statSync(real).isDirectory() ? { folder, realRoot, decoded } : null
  } catch {
    return null
  }
}

// → [{ name, type: 'directory' | 'file', size, mtime }], folders first, by name.
function entriesOf ({ folder, realRoot }, dotfiles) {
  const entries = []
  for (const name of fs.readdirSync(folder)) {
    if (dotfiles !== 'allow' && name.startsWith('.')) continue
    const file = path.join(folder, name)
    const real = realOrNull(file)
    if (real === null || !isInside(realRoot, real)) continue
    let stat
    try {
      stat = fs.statSync(real)
    } catch {
      continue
    }
    if (stat.isDirectory()) entries.push({ name, type: 'directory', size: null, mtime: stat.mtime.toISOString() })
    else if (stat.isFile()) entries.push({ name, type: 'file', size: stat.size, mtime: stat.mtime.toISOString() })
  }
  return entries.sort((a, b) => (a.type === b.type ? (a.name < b.name ? -1 : 1) : a.type === 'directory' ? -1 : 1))
}

function renderHtml (title, entries, isRoot) {
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
<caption>${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}</caption>
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

// → true when the request was for a listable folder and has been answered.
function sendListing (req, res, root, pathname, dotfiles) {
  const found = folderOf(root, pathname, dotfiles)
  if (found === null) return false
  let entries
  try {
    entries = entriesOf(found, dotfiles)
  } catch {
    return false
  }
  const json = new Negotiator(req).mediaType(['text/html', 'application/json']) === 'application/json'
  const body = json
    ? JSON.stringify({ path: found.decoded, entries }) + '\n'
    : renderHtml(found.decoded, entries, found.decoded === '/')
  res.statusCode = 200
  res.setHeader('Content-Type', json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Cache-Control', 'no-cache')
  res.setHeader('Vary', 'Accept')
  res.end(req.method === 'HEAD' ? undefined : body)
  return true
}

module.exports = { sendListing }
