'use strict'

// What a response says about its file: the headers computed from a file
// (Content-Type, ETag, Last-Modified, Content-Length), the conditional
// requests (RFC 9110 §13), byte ranges (§14), and the precompressed siblings
// (`.br`, `.gz`) a request may be answered with.

const { contentTypeOf, removeContentHeaders, setContentLength, setFileHeaders } = require('./headers')
const { negotiateEncoding, precompressedEncodings, siblingNames, siblingsOf } = require('./precompressed')
const { BODY, isConditional, notModified, preconditionFailed } = require('./preconditions')
const { selectRange } = require('./range')

module.exports = {
  BODY,
  contentTypeOf,
  isConditional,
  negotiateEncoding,
  notModified,
  precompressedEncodings,
  preconditionFailed,
  removeContentHeaders,
  selectRange,
  setContentLength,
  setFileHeaders,
  siblingNames,
  siblingsOf
}
