// Child process for fifo.test.mjs: each <root>/<name> is, in turn, the regular file
// <root>/.parked-file and the FIFO <root>/.parked-fifo (hard links renamed over it:
// the name always exists, and flips atomically), as fast as it can, for <ms>
// milliseconds. Prints the number of flips.
//   node fifo-flipper.mjs <root> <ms> <name>...

import { linkSync, renameSync } from 'node:fs'
import { join } from 'node:path'

const [root, ms, ...names] = process.argv.slice(2)
const targets = names.map((name) => join(root, name))
const file = join(root, '.parked-file')
const fifo = join(root, '.parked-fifo')
const tmp = join(root, '.flipping')
const deadline = Date.now() + Number(ms)

let flips = 0
while (Date.now() < deadline) {
  for (const target of targets) {
    for (let i = 0; i < 20; i++) {
      linkSync(fifo, tmp)
      renameSync(tmp, target) // a FIFO where a regular file was
      linkSync(file, tmp)
      renameSync(tmp, target) // the regular file again
      flips += 2
    }
  }
}
process.stdout.write(String(flips))
