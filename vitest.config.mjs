import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.mjs'],
    // Forks, not threads: tests count this process's descriptors in /proc/self/fd.
    pool: 'forks',
    // Three files at once on this 2-core kind of machine (vitest's default there is
    // one): most of the suite waits on sockets, children and timers, and the
    // timing-sensitive tests must hold on a loaded machine anyway. About 2.5 min
    // per run instead of 4.3.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 30_000
  }
})
