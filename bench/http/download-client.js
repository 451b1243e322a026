'use strict'

// The memory check's client, in its own process: `count` concurrent GETs of `url`,
// bodies read as fast as they come and dropped. Sends { bytes, failures } when done.

const http = require('node:http')

const [url, count] = process.argv.slice(2)

function download () {
  return new Promise((resolve) => {
    http.get(url, { agent: false }, (res) => {
      let bytes = 0
      res.on('data', (chunk) => { bytes += chunk.length })
      res.on('end', () => resolve(bytes))
      res.on('error', () => resolve(-1))
    }).on('error', () => resolve(-1))
  })
}

Promise.all(Array.from({ length: Number(count) }, download)).then((sizes) => {
  process.send({
    bytes: sizes.reduce((sum, n) => sum + Math.max(n, 0), 0),
    failures: sizes.filter((n) => n < 0).length
  })
})
