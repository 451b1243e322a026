'use strict'

// The order of a --listing: folders first, then names as people read them
// (case-insensitive, numbers by value: 'app.js' before 'README.md', 'file9'
// before 'file10'), or by size or date when the page's column links ask for
// it (?sort=name|size|date, &order=desc).

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' })

const SORTS = new Set(['name', 'size', 'date'])

// Names equal to the collator ('a.txt', 'A.txt') still get one fixed order.
function byName (a, b) {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0)
}

function folderFirst (a, b) {
  return a.type === b.type ? 0 : a.type === 'directory' ? -1 : 1
}

function byTypeThenName (a, b) {
  return folderFirst(a, b) || byName(a.name, b.name)
}

const compareBy = {
  name: (a, b) => byName(a.name, b.name),
  size: (a, b) => (a.size ?? 0) - (b.size ?? 0),
  date: (a, b) => Date.parse(a.mtime) - Date.parse(b.mtime)
}

// The order a query asks for; anything else is the default, by name ascending.
function orderOf (query) {
  const params = new URLSearchParams(query)
  const sort = SORTS.has(params.get('sort')) ? params.get('sort') : 'name'
  return { sort, order: params.get('order') === 'desc' ? 'desc' : 'asc' }
}

// → the entries ({ name, type, size, mtime }) in that order: folders first
// either way, equal sizes or dates by name (ascending).
function sortEntries (entries, { sort, order }) {
  const sign = order === 'desc' ? -1 : 1
  const compare = compareBy[sort]
  return entries.slice().sort((a, b) =>
    folderFirst(a, b) || sign * compare(a, b) || byName(a.name, b.name))
}

module.exports = { byTypeThenName, orderOf, sortEntries }
