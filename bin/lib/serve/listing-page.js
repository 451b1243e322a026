'use strict'

// The HTML page of a --listing: clickable breadcrumbs, a table whose column
// headers sort it (plain links, ?sort=…&order=…: no script), human sizes with
// the exact bytes on hover, dates in ISO form (UTC), a light and a dark theme.
// Every name is escaped where it is text and percent-encoded where it is a
// link; the Content-Security-Policy allows no script at all and only this
// page's own style (by its hash).

const crypto = require('node:crypto')
const escapeHtml = require('escape-html')
const { formatSize } = require('../../../tools/size')

const STYLE = ':root{color-scheme:light dark}' +
  'body{font:16px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1f2328;background:#fff}' +
  'h1{font-size:1.25rem;font-weight:600;overflow-wrap:anywhere}' +
  'a{color:#0969da;text-decoration:none}a:hover,a:focus{text-decoration:underline}' +
  'table{border-collapse:collapse;width:100%}caption{text-align:left;color:#59636e;padding-bottom:.5rem}' +
  'th,td{text-align:left;padding:.3rem .75rem .3rem 0;border-bottom:1px solid #d1d9e0}' +
  'td:nth-child(2),th:nth-child(2){text-align:right}' +
  'td:nth-child(2),td:nth-child(3){white-space:nowrap;font-variant-numeric:tabular-nums}' +
  'td:first-child{overflow-wrap:anywhere}tbody tr:hover{background:#f6f8fa}' +
  '@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}a{color:#4493f8}' +
  'caption{color:#9198a1}th,td{border-color:#3d444d}tbody tr:hover{background:#151b23}}'

const CONTENT_SECURITY_POLICY = "default-src 'none'; " +
  `style-src 'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'; ` +
  "base-uri 'none'; form-action 'none'"

const COLUMNS = [['name', 'Name'], ['size', 'Size'], ['date', 'Modified (UTC)']]

// '/a b/c/' → 'Index of /a b/c/', each part a link to its folder ('/a%20b/').
function breadcrumbs (folder) {
  let href = '/'
  const links = [`<a href="/"${folder === '/' ? ' aria-current="page"' : ''}>/</a>`]
  const segments = folder.split('/').filter(Boolean)
  segments.forEach((segment, at) => {
    href += encodeURIComponent(segment) + '/'
    const current = at === segments.length - 1 ? ' aria-current="page"' : ''
    links.push(`<a href="${escapeHtml(href)}"${current}>${escapeHtml(segment)}</a>/`)
  })
  return links.join('')
}

// A column header: a link to sort by it, ascending, or descending when it is
// the column sorted ascending now.
function header ([sort, label], current) {
  if (sort !== current.sort) return `<th scope="col"><a href="?sort=${sort}">${label}</a></th>`
  const ascending = current.order === 'asc'
  const href = ascending ? `?sort=${sort}&amp;order=desc` : `?sort=${sort}`
  return `<th scope="col" aria-sort="${ascending ? 'ascending' : 'descending'}"><a href="${href}">${label} ${ascending ? '↑' : '↓'}</a></th>`
}

function exactBytes (size) {
  return size === 1 ? '1 byte' : `${size.toLocaleString('en')} bytes`
}

function row ({ name, type, size, mtime }) {
  const slash = type === 'directory' ? '/' : ''
  const link = `<a href="${escapeHtml(encodeURIComponent(name))}${slash}">${escapeHtml(name)}${slash}</a>`
  const sizeCell = size === null ? '—' : `<span title="${exactBytes(size)}">${formatSize(size)}</span>`
  const date = `<time datetime="${mtime}">${mtime.slice(0, 19).replace('T', ' ')}</time>`
  return `<tr><td>${link}</td><td>${sizeCell}</td><td>${date}</td></tr>`
}

// `folder`: the decoded path ('/a b/'); `listed`: { entries (in display
// order), total, truncated, limit }; `order`: { sort, order }.
function renderPage (folder, listed, order) {
  const { entries, total, truncated, limit } = listed
  const rows = entries.map(row)
  if (folder !== '/') rows.unshift('<tr><td><a href="../">../</a></td><td></td><td></td></tr>')
  const counted = `${total} ${total === 1 ? 'entry' : 'entries'}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Index of ${escapeHtml(folder)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Index of ${breadcrumbs(folder)}</h1>
<table>
<caption>${truncated ? `${counted}, the first ${limit}${order.sort === 'name' ? '' : ' by name'} shown` : counted}</caption>
<thead><tr>${COLUMNS.map((column) => header(column, order)).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</main>
</body>
</html>
`
}

module.exports = { renderPage, CONTENT_SECURITY_POLICY }
