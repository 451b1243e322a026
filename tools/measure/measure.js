'use strict'

const { processProbe, cpuDelta } = require('./process-probe')

const GIB = 1024 ** 3

// Runs `op(slot)` — one transfer of `size` bytes, resolving with the bytes it
// moved — under tinybench, `concurrency` at a time (each concurrent op gets
// its own slot number, 0 ≤ slot < concurrency), for `duration` seconds or
// exactly `iterations` ops after a short warmup. Wall time, CPU and peak RSS
// cover the measured phase only; `probe` says which process's CPU and memory
// count (by default this one).
//
// Returns { throughput, opsPerSec, p50, p99, cpuPerGiB: { user, system,
// mainThread }, peakRss, operations, bytesMoved, seconds, warmupOperations }
// with throughput in bytes/s, latencies and CPU in milliseconds, peakRss in
// bytes (null where unknown).
async function measure ({ size, op, concurrency = 1, duration, iterations, probe = processProbe() }) {
  const { Bench } = await import('tinybench')
  const freeSlots = Array.from({ length: concurrency }, (_, slot) => slot).reverse()
  const phase = { operations: 0 }
  let warmupOperations = 0
  let window = null

  async function timedOp () {
    const slot = freeSlots.pop()
    try {
      const bytes = await op(slot)
      if (bytes !== size) throw new Error(`a transfer moved ${bytes} bytes, expected ${size}`)
      phase.operations++
    } finally {
      freeSlots.push(slot)
    }
  }

  const bench = new Bench({
    concurrency: concurrency > 1 ? 'task' : null,
    threshold: concurrency,
    throws: true,
    time: iterations ? 0 : duration * 1000,
    iterations: iterations || (concurrency > 1 ? 0 : 1),
    warmupTime: iterations ? 0 : Math.min(duration * 100, 250),
    warmupIterations: Math.min(concurrency, iterations || concurrency)
  })
  bench.add('op', timedOp, {
    async: true,
    beforeAll (mode) {
      phase.operations = 0
      if (mode !== 'run') return
      probe.resetPeakRss()
      window = { start: process.hrtime.bigint(), cpu: probe.cpu() }
    },
    afterAll (mode) {
      if (mode !== 'run') {
        warmupOperations = phase.operations
        return
      }
      window.seconds = Number(process.hrtime.bigint() - window.start) / 1e9
      window.cpu = cpuDelta(window.cpu, probe.cpu())
      window.peakRss = probe.peakRss()
    }
  })
  await bench.run()

  const { latency } = bench.getTask('op').result
  const { operations } = phase
  const bytesMoved = operations * size
  const perGiB = (ms) => ms === null ? null : ms * GIB / bytesMoved
  return {
    throughput: bytesMoved / window.seconds,
    opsPerSec: operations / window.seconds,
    p50: latency.p50,
    p99: latency.p99,
    cpuPerGiB: {
      user: perGiB(window.cpu.user),
      system: perGiB(window.cpu.system),
      mainThread: perGiB(window.cpu.mainThread)
    },
    peakRss: window.peakRss,
    operations,
    bytesMoved,
    seconds: window.seconds,
    warmupOperations
  }
}

module.exports = { measure }
