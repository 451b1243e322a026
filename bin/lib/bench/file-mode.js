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
  copyFile: async (source, destination) => {
    await fs.promises.copyFile(source, destination)
    return (await fs.promises.stat(destination)).size
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
      op: slot => copiers[method](file, destinations[slot], zcopy)
    })
  } finally {
    for (const destination of destinations) fs.rmSync(destination, { force: true })
  }
}

module.exports = { runFileMode, fileMethods: Object.keys(copiers) }
