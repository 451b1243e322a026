// A copy of the package in a temporary directory, without the repository's
// build/ and prebuilds/: lib/, bin/, tools/ and package.json, its dependencies through
// a node_modules symlink. What an install whose addon was never built looks like.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeTempDir } from './files.mjs'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BUILT_ADDON = path.join(ROOT, 'build', 'Release', 'zcopy.node')

// The binary node-gyp-build loads from this checkout, { path, from }: a build in
// build/Release when there is one, else the committed prebuild (as after
// `npm ci`, which builds nothing: zcopy has no install script).
export const LOADED_ADDON = (() => {
  const file = createRequire(import.meta.url)('node-gyp-build').path(ROOT)
  const tag = /\.(glibc|musl)\.node$/.exec(file)
  return { path: file, from: file.includes(`${path.sep}prebuilds${path.sep}`) ? 'prebuild' : 'build', libc: tag ? tag[1] : null }
})()

export function copyPackage () {
  const root = makeTempDir('zcopy-package-')
  for (const entry of ['lib', 'bin', 'tools', 'package.json']) {
    fs.cpSync(path.join(ROOT, entry), path.join(root, entry), { recursive: true })
  }
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(root, 'node_modules'))
  return root
}

// Puts `contents` (a Buffer, or the path of a file to copy) at `relative` in the copy.
export function addBinary (root, relative, contents) {
  const file = path.join(root, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  if (Buffer.isBuffer(contents)) fs.writeFileSync(file, contents)
  else fs.copyFileSync(contents, file)
  return file
}

// The child environment that leaves the choice of binary to the copy alone.
export const NEUTRAL_ENV = { ZCOPY_NATIVE: undefined, ZCOPY_PREBUILD: undefined, PREBUILDS_ONLY: undefined }
