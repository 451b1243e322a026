'use strict'

// A realistic JavaScript bundle for the compressed-asset benchmark: real code
// from the packages in node_modules (pinned by package-lock.json), concatenated
// in a fixed order, as a bundler's output looks, cut to `size` bytes (212 KiB by
// default, the size issue 48 measured). The same checkout gives the same bytes.

const fs = require('node:fs')
const path = require('node:path')
const { parseOptions, usageError } = require('../lib/usage')

const BUNDLE_SIZE = 212 * 1024
const PACKAGES = ['express', 'koa', 'fastify', 'negotiator', 'mime-types', 'yargs', 'vitest', 'tinybench', 'range-parser', 'http-errors', 'ms', 'etag', 'fresh', 'sirv', 'compression']

function jsFiles (dir, out) {
  let names
  try { names = fs.readdirSync(dir, { withFileTypes: true }) } catch { return out }
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of names) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'test') continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) jsFiles(full, out)
    else if (entry.isFile() && /\.(c|m)?js$/.test(entry.name) && !entry.name.endsWith('.min.js')) out.push(full)
  }
  return out
}

// → Buffer of `size` bytes of JavaScript.
function makeBundle (size = BUNDLE_SIZE, modules = path.join(__dirname, '..', '..', 'node_modules')) {
  const parts = []
  let total = 0
  for (const name of PACKAGES) {
    for (const file of jsFiles(path.join(modules, name), [])) {
      const text = `/* ${path.relative(modules, file)} */\n;(function(){\n${fs.readFileSync(file, 'utf8')}\n})();\n`
      parts.push(text)
      total += Buffer.byteLength(text)
      if (total >= size) return Buffer.from(parts.join('')).subarray(0, size)
    }
  }
  throw new Error(`not enough JavaScript under ${modules} for ${size} bytes`)
}

module.exports = { BUNDLE_SIZE, makeBundle }

if (require.main === module) {
  // node bench/http/bundle.js [OUT]: writes the bundle to OUT (bundle.js).
  const { positionals } = parseOptions(__filename, { allowPositionals: true })
  if (positionals.length > 1) usageError(__filename, `one output file, not ${positionals.length}`)
  const out = positionals[0] ?? 'bundle.js'
  fs.writeFileSync(out, makeBundle())
  console.log(`${out}: ${BUNDLE_SIZE} bytes`)
}
