'use strict'

// Content-Disposition: attachment with a file's base name (RFC 6266), as the
// content-disposition package writes it: a token or quoted ASCII filename, plus
// filename* (RFC 8187) when the name is not plain ASCII.

const path = require('node:path')

const TOKEN = /^[!#$%&'*+.0-9A-Z^_`a-z|~-]+$/
const NON_ASCII = /[^\x20-\x7e]/g
const QUOTE = /[\\"]/g
const RESERVED = /['()*]/g

const percent = (char) => '%' + char.charCodeAt(0).toString(16).toUpperCase()

function attachment (file) {
  const name = path.basename(String(file))
  const fallback = name.replace(NON_ASCII, '?')
  let value = 'attachment; filename=' + (TOKEN.test(fallback) ? fallback : `"${fallback.replace(QUOTE, '\\$&')}"`)
  if (fallback !== name) value += "; filename*=UTF-8''" + encodeURIComponent(name).replace(RESERVED, percent)
  return value
}

module.exports = { attachment }
