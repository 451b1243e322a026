'use strict'

// The part of a file a GET answers with. One satisfiable range → 206 with
// Content-Range; an unsatisfiable one → 416; several ranges, a malformed header or
// an If-Range that does not validate the body → the whole file (as send does: no
// multipart/byteranges).

const parseRange = require('range-parser')
const { contentRange } = require('./headers')
const { httpError } = require('../common')
const { rangeFresh } = require('./preconditions')

const BYTES_RANGE = /^ *bytes=/

// → { start, end } (inclusive; end = start - 1 for an empty body). Sets status and
// Content-Range on `res` for a partial answer. `body`: what is sent, a BODY (see
// rangeFresh()).
function selectRange (req, res, size, acceptRanges, body) {
  const header = req.headers.range
  if (acceptRanges && header !== undefined && BYTES_RANGE.test(header)) {
    const ranges = rangeFresh(req, res, body) ? parseRange(size, header, { combine: true }) : -2
    if (ranges === -1) {
      const unsatisfied = contentRange(size)
      res.setHeader('Content-Range', unsatisfied)
      throw httpError(416, { headers: { 'Content-Range': unsatisfied } })
    }
    if (ranges !== -2 && ranges.length === 1) {
      res.statusCode = 206
      res.setHeader('Content-Range', contentRange(size, ranges[0]))
      return { start: ranges[0].start, end: ranges[0].end }
    }
  }
  return { start: 0, end: size - 1 }
}

module.exports = { selectRange }
