// The package as users get it: `npm pack`, then `npm install <tarball>
// --ignore-scripts --offline` into a new project outside the repo. The registry is
// never asked: the tarball's runtime dependencies are copied beforehand from this
// checkout's node_modules (as `npm ci` left them) into the project, and npm finds
// them there.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { makeTempDir } from './files.mjs'

const run = promisify(execFile)
export const repo = fileURLToPath(new URL('../..', import.meta.url))

function findPackage (name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const at = path.join(dir, 'node_modules', name)
    if (fs.existsSync(path.join(at, 'package.json'))) return at
    if (dir === path.dirname(dir)) return null
  }
}

// Every package the runtime dependencies need, as directories in the checkout.
function runtimeClosure () {
  const found = new Set()
  const walk = (dir) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
    for (const name of Object.keys(pkg.dependencies || {})) {
      const at = findPackage(name, dir)
      if (!at) throw new Error(`${name} (needed by ${pkg.name}) is not installed; run npm ci`)
      if (found.has(at)) continue
      found.add(at)
      walk(at)
    }
  }
  walk(repo)
  return found
}

// Copies the runtime closure into project/node_modules, at the same places.
function seedDependencies (project) {
  const modules = path.join(repo, 'node_modules')
  const realModules = fs.realpathSync(modules)
  for (const at of runtimeClosure()) {
    const relative = path.relative(modules, at)
    if (relative.split(path.sep).includes('node_modules')) continue // nested: comes with its parent
    fs.cpSync(fs.realpathSync(at), path.join(project, 'node_modules', relative), { recursive: true })
    if (!fs.realpathSync(at).startsWith(realModules)) throw new Error(`${at} is outside node_modules`)
  }
}

// → { project, tarball, files, size }
export async function packAndInstall () {
  const project = makeTempDir('zcopy-pack-')
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: repo })
  const [packed] = JSON.parse(stdout)
  const tarball = path.join(project, packed.filename)
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'zcopy-pack-test', private: true }))
  seedDependencies(project)
  await run('npm', ['install', tarball, '--ignore-scripts', '--offline', '--no-audit', '--no-fund', '--no-package-lock'], { cwd: project })
  return { project, tarball, files: packed.files.map((f) => f.path), size: packed.size }
}
