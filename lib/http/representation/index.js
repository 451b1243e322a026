'use strict'

// What a response says about its file: the headers computed from a file
// (Content-Type, ETag, Last-Modified, Content-Length; content ETags), the conditional
// requests (RFC 9110 §13), byte ranges (§14), the content codings (the one
// table of their names and suffixes, the one Accept-Encoding negotiation) and
// the precompressed siblings a request may be answered with.

const { acceptedCodings } = require('./accept-encoding')
const { CODINGS, IDENTITY, codingNames, suffixOf } = require('./codings')
const { ContentTags } = require('./content-tag')
const { contentTypeOf, removeContentHeaders, setContentLength, setFileHeaders } = require('./headers')
const { negotiateEncoding, precompressedEncodings, siblingNames, siblingsOf } = require('./precompressed')
const { BODY, isConditional, notModified, preconditionFailed } = require('./preconditions')
const { selectRange } = require('./range')

module.exports = {
  BODY,
  CODINGS,
  ContentTags,
  IDENTITY,
  acceptedCodings,
  codingNames,
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
  siblingsOf,
  suffixOf
}
