'use strict'

// A request-target split into its path and its query, without URL parsing (which
// would resolve dot segments and backslashes before the security checks see them).
// A fragment, which clients should not send, is dropped.

function splitUrl (url) {
  const end = url.search(/[?#]/)
  if (end === -1) return { pathname: url, query: '' }
  const query = url[end] === '?' ? url.slice(end).replace(/#.*$/s, '') : ''
  return { pathname: url.slice(0, end), query }
}

module.exports = { splitUrl }
