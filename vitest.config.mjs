import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.mjs'],
    // Forks, not threads: tests count this process's descriptors in /proc/self/fd.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 30_000
  }
})
