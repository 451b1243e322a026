'use strict'

// Directory listings (`list` option), as @fastify/static answers them: JSON
// ({ dirs, files } of names, or of entries with stats when jsonFormat is
// 'extended') or HTML from the app's render(dirs, files). A folder's
// extendedInfo (`extendedFolderInfo`) comes from ./folder-info, bounded.

const fs = require('node:fs/promises')
const path = require('node:path')
const { FST_STATIC_INVALID_OPTION_VALUE, FST_STATIC_MULTIROOT_LIST_CONFLICT } = require('./errors')
const { FolderWalks, eachBounded } = require('./folder-info')

const URL_DELIMITERS = /[#?]/g

function isInside (root, target) {
  const relative = path.relative(root, target)
  return relative === '' || (relative !== '..' && !relative.startsWith('..' + path.sep) && !path.isAbsolute(relative))
}

const byName = (a, b) => a.name.localeCompare(b.name)

async function entriesOf (dir, options, dotfiles) {
  const entries = { dirs: [], files: [] }
  let names = await fs.readdir(dir)
  if (dotfiles === 'deny' || dotfiles === 'ignore') names = names.filter((name) => name[0] !== '.')
  await eachBounded(names.length, async (index) => {
    const name = names[index]
    let stats
    try {
      stats = await fs.stat(path.join(dir, name))
    } catch {
      return
    }
    const listed = { name, stats }
    if (stats.isDirectory()) entries.dirs.push(listed)
    else entries.files.push(listed)
  })
  entries.dirs.sort(byName)
  entries.files.sort(byName)
  if (options.extendedFolderInfo) {
    const walks = new FolderWalks()
    for (const folder of entries.dirs) folder.extendedInfo = await walks.infoOf(path.join(dir, folder.name), folder.stats)
  }
  return entries
}

function htmlInfo (listed, route, prefix, options) {
  if (options.names && options.names.includes(path.basename(route))) {
    route = path.posix.normalize(path.posix.join(route, '..'))
  }
  return {
    href: encodeURI(path.posix.join(prefix, route, listed.name)).replace(URL_DELIMITERS, encodeURIComponent),
    name: listed.name,
    stats: listed.stats,
    extendedInfo: listed.extendedInfo
  }
}

// Answers `reply` with the listing of `dir`; a directory that cannot be read is
// not found.
async function sendList ({ reply, dir, options, route, prefix, dotfiles }) {
  const query = reply.request.query || {}
  if (query.format === 'html' && typeof options.render !== 'function') {
    throw new FST_STATIC_INVALID_OPTION_VALUE('list.render', 'must be a function and is required with the URL parameter `format=html`')
  }
  let entries
  try {
    entries = await entriesOf(dir, options, dotfiles)
  } catch {
    return reply.callNotFound()
  }
  const format = query.format || options.format
  if (format !== 'html') {
    if (options.jsonFormat === 'extended') return reply.send(entries)
    return reply.send({ dirs: entries.dirs.map((e) => e.name), files: entries.files.map((e) => e.name) })
  }
  const html = options.render(
    entries.dirs.map((listed) => htmlInfo(listed, route, prefix, options)),
    entries.files.map((listed) => htmlInfo(listed, route, prefix, options)))
  return reply.type('text/html').send(html)
}

// Whether `route` names a listing by one of `names` ('/' for a trailing slash).
function isListRoute (route, options) {
  if (!options.names) return false
  return options.names.includes(path.basename(route)) || (options.names.includes('/') && route.endsWith('/'))
}

// The directory `route` lists below `root`, or null outside it.
function listedDirectory (root, route) {
  const relative = route.endsWith('/') ? '.' + route + 'none' : '.' + route
  const resolvedRoot = path.resolve(root)
  const dir = path.dirname(path.resolve(resolvedRoot, relative))
  return isInside(resolvedRoot, dir) ? dir : null
}

// → an error for bad `list` options, or undefined.
function listOptionsError (options) {
  const list = options.list
  if (!list) return undefined
  if (Array.isArray(options.root)) return new FST_STATIC_MULTIROOT_LIST_CONFLICT()
  if (list.format && list.format !== 'json' && list.format !== 'html') {
    return new FST_STATIC_INVALID_OPTION_VALUE('list.format', 'must be json or html')
  }
  if (list.names && !Array.isArray(list.names)) return new FST_STATIC_INVALID_OPTION_VALUE('list.names', 'must be an array')
  if (list.jsonFormat != null && list.jsonFormat !== 'names' && list.jsonFormat !== 'extended') {
    return new FST_STATIC_INVALID_OPTION_VALUE('list.jsonFormat', 'must be names or extended')
  }
  if (list.format === 'html' && typeof list.render !== 'function') {
    return new FST_STATIC_INVALID_OPTION_VALUE('list.render', 'must be a function and is required with html format')
  }
  return undefined
}

module.exports = { isListRoute, listOptionsError, listedDirectory, sendList }
