'use strict'

// The revalidate-4k case: a browser asking again for a file it holds, with the
// validator the server gave it, so that every answer is a 304 without a body.
// Before each run, one plain GET takes that server's own validator (its ETag,
// If-None-Match; or, from a server that gives none, its Last-Modified,
// If-Modified-Since, as a browser falls back to), a wrk Lua script sends it with
// every request, and one request with it says whether the answer is a 304.

const http = require('node:http')
const https = require('node:https')
const { writeFileSync } = require('node:fs')

// One GET of `url` with `headers` → { status, headers } (the body read and
// dropped). Over https, the run's self-signed certificate is accepted.
function get (url, headers = {}) {
  const client = url.startsWith('https:') ? https : http
  return new Promise((resolve, reject) => {
    client.get(url, { headers, agent: false, rejectUnauthorized: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }))
    }).on('error', reject)
  })
}

// → { header, value }: what a browser sends back to revalidate `url`, or null
// when the server gives no validator at all.
async function validatorOf (url) {
  const { headers } = await get(url)
  if (headers.etag !== undefined) return { header: 'If-None-Match', value: headers.etag }
  if (headers['last-modified'] !== undefined) return { header: 'If-Modified-Since', value: headers['last-modified'] }
  return null
}

// Writes the wrk Lua script that sends `validator` with every request to `file`;
// a long bracket string holds an ETag's quotes as they are.
function writeScript (file, validator) {
  writeFileSync(file, validator === null ? '' : `wrk.headers["${validator.header}"] = [==[${validator.value}]==]\n`)
  return file
}

// Prepares a revalidation of `url` into the script `file` → { script, note }:
// `note` says, for the table, how the server fell short of a 304 to
// If-None-Match (null when it did not).
async function prepareRevalidation (url, file) {
  const validator = await validatorOf(url)
  const script = writeScript(file, validator)
  if (validator === null) return { script, note: 'no ETag or Last-Modified: 200s' }
  const { status } = await get(url, { [validator.header]: validator.value })
  if (status !== 304) return { script, note: `${status}, not 304, to ${validator.header}` }
  return { script, note: validator.header === 'If-None-Match' ? null : 'no ETag: If-Modified-Since' }
}

module.exports = { prepareRevalidation }
