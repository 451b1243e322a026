'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { pipeline } = require('node:stream/promises')
const { measure } = require('./measure')

// --mode file: copies the file to a new file in the same directory (one
// destination per concurrent op), with fs.copyFile as an extra reference.

const copiers = {
  zcopy: async (source, destination, zcopy) => (await zcopy.pipeFile(source, destination)).bytes,
  stream: async (source, destination) => {
    const output = fs.createWriteStream(destination)
    await pipeline(fs.createReadStream(source), output)
    return output.bytesWritten
  },
  // It reports no byte count: the file's size (known) is counted, so that the
  // reference pays for the copy alone, not for a stat the others do not make.
  copyFile: async (source, destination, zcopy, size) => {
    await fs.promises.copyFile(source, destination)
    return size
  }
}

async function runFileMode ({ file, size, concurrency, duration, iterations, method, zcopy }) {
  const destinations = Array.from({ length: concurrency }, (_, slot) =>
    path.join(path.dirname(file), `copy-${slot}-${path.basename(file)}`))
  try {
    return await measure({
      size,
      concurrency,
      duration,
      iterations,
      op: (slot) => copiers[method](file, destinations[slot], zcopy, size)
    })
  } finally {
    for (const destination of destinations) fs.rmSync(destination, { force: true })
  }
}

module.exports = { runFileMode, fileMethods: Object.keys(copiers) }
