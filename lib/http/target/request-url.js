'use strict'

// A request-target split into its path and what follows it, without URL parsing
// (which would resolve dot segments and backslashes before the security checks
// see them). The one place where every entry point (serveStatic, the adapters,
// zcopy serve) reads a request-target.
//
// RFC 9112 §3.2: an origin-form target is the path itself. Of an absolute-form
// one ('http://host/a?b', sent to proxies, and which a server must accept) only
// the path counts (§3.2.2): the scheme and authority are dropped here, so that
// 'http://x/../../f' is '/../../f' (refused as it climbs) and never 'f' below
// the root. Anything else that does not start with '/' (asterisk-form '*', a
// bare 'name') has no path: `pathname` is null.

// scheme "://" authority, as RFC 3986 spells them (the authority ends at the
// path, query or fragment).
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/
const QUERY_OR_FRAGMENT = /[?#]/

// → { pathname, query, rest }: `pathname` (null when the target has none),
// `query` ('?…' or '', a fragment, which clients should not send, dropped) and
// `rest`, all that follows the path as the request wrote it.
function splitUrl (url) {
  const authority = url[0] === '/' ? null : ABSOLUTE_FORM.exec(url)
  let target = url
  if (authority !== null) {
    target = url.slice(authority[0].length)
    if (target === '' || target[0] === '?' || target[0] === '#') target = '/' + target // an empty path is '/'
  }
  const end = target.search(QUERY_OR_FRAGMENT)
  const pathname = end === -1 ? target : target.slice(0, end)
  const rest = end === -1 ? '' : target.slice(end)
  const query = rest[0] === '?' ? rest.replace(/#.*$/s, '') : ''
  return { pathname: pathname[0] === '/' ? pathname : null, query, rest }
}

module.exports = { splitUrl }
