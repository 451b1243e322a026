// Child process for confinement-race.test.mjs: flips <root>/<name> between the
// directory inside the root and a symlink to a directory outside it, with renames
// only, as fast as it can, for <ms> milliseconds. Parks the directory at
// <root>/.parked-dir and the symlink at <root>/.parked-link in between (dotfiles:
// never served). Prints the number of flips.
//   node confinement-flipper.mjs <root> <name> <ms>

import { renameSync } from 'node:fs'
import { join } from 'node:path'

const [root, name, ms] = process.argv.slice(2)
const target = join(root, name)
const parkedDir = join(root, '.parked-dir')
const parkedLink = join(root, '.parked-link')
const deadline = Date.now() + Number(ms)

let flips = 0
while (Date.now() < deadline) {
  for (let i = 0; i < 100; i++) {
    renameSync(target, parkedDir) // the directory leaves…
    renameSync(parkedLink, target) // …and the symlink out of the root takes its name
    renameSync(target, parkedLink)
    renameSync(parkedDir, target) // the directory is back
    flips += 2
  }
}
process.stdout.write(String(flips))
