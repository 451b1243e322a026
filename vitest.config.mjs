import { configDefaults, defineConfig } from 'vitest/config'

// What runs where (docs/testing.md, "What runs where"):
// - `npm test` = `vitest run && ZCOPY_NATIVE=0 vitest run`: the suite with the
//   native addon, then with the stream fallback, minus the files below.
// - `npm run test:slow` (ZCOPY_TEST_SET=slow): SLOW, once, native; .ci/run runs it
//   after `npm test`, so CI runs every file every time.
// - ZCOPY_TEST_SET=all: every file in this pass, whatever ZCOPY_NATIVE says.

// The tests of the repository's benchmark and soak scripts (bench/, which the
// package does not ship): they run servers under callgrind, two builds in
// alternating rounds, whole load runs and soaks, and took a quarter of the native
// pass (bench-instructions alone ~1/8). They prove the tools, not the library.
const SLOW = [
  'test/cli/bench-*.test.mjs',
  'test/cli/engine-bench.test.mjs',
  'test/cli/copy-loop.test.mjs',
  'test/cli/soak.test.mjs',
  // a minute of random heads against the native lane's request-head parser
  'test/engine/request-head-fuzz.test.mjs',
  // a minute of fuzzed connections against zcopy serve --native-lane
  'test/cli/serve-native-lane-fuzz.test.mjs'
]

// Files in which the choice between sendfile and the stream fallback changes
// nothing, or that make that choice themselves per child (doctor, bench, dist's
// package test set ZCOPY_NATIVE in each child's environment; soak runs both):
// the CLI (it only calls the public API, whose both paths test/http and
// test/engine cover in both passes), the docs, the type declarations, the
// packaged tarball, the prebuilt binaries, Bun (always the fallback) and a
// source scan. They run in the native pass only.
const ENGINE_INDEPENDENT = [
  'test/cli/**',
  'test/docs/**',
  'test/types/**',
  'test/dist/**',
  'test/adapters/packaging.test.mjs',
  'test/no-private-fields.test.mjs'
]

const set = process.env.ZCOPY_TEST_SET || 'default'
if (!['default', 'slow', 'all'].includes(set)) throw new Error(`ZCOPY_TEST_SET=${set}: default, slow or all`)
const fallbackPass = process.env.ZCOPY_NATIVE === '0'
const exclude = [...configDefaults.exclude]
if (set === 'default') exclude.push(...SLOW)
if (set === 'default' && fallbackPass) {
  exclude.push(...ENGINE_INDEPENDENT)
  console.log('ZCOPY_NATIVE=0: test/cli, test/docs, test/types, test/dist and two more files do not depend on the engine and ran in the native pass (ZCOPY_TEST_SET=all runs them here too)')
}

export default defineConfig({
  test: {
    include: set === 'slow' ? SLOW : ['test/**/*.test.mjs'],
    exclude,
    // Forks, not threads: tests count this process's descriptors in /proc/self/fd.
    pool: 'forks',
    // Three files at once on this 2-core kind of machine (vitest's default there is
    // one): most of the suite waits on sockets, children and timers, and the
    // timing-sensitive tests must hold on a loaded machine anyway.
    maxWorkers: 3,
    // The default's lines, and a file still running after 5 minutes named
    // every minute (a stuck worker otherwise shows as CI's timeout alone).
    reporters: ['default', './test/support/still-running-reporter.mjs'],
    testTimeout: 60_000,
    hookTimeout: 30_000
  }
})
