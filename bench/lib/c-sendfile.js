'use strict'

const { execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { processProbe } = require('../../tools/measure/process-probe')

const SOURCE = path.join(__dirname, '..', 'c', 'sendfile-loop.c')
const OUT_DIR = path.join(__dirname, '..', 'out') // git-ignored

// Compiles c/sendfile-loop.c with `cc -O2` into bench/out/. Returns the
// binary's path, or { skipped: reason } when there is no working compiler.
function compileSendfileLoop () {
  const binary = path.join(OUT_DIR, 'sendfile-loop')
  const building = `${binary}.${process.pid}` // renamed into place: concurrent runs never see half a binary
  fs.mkdirSync(OUT_DIR, { recursive: true })
  try {
    execFileSync('cc', ['-O2', '-Wall', '-Werror', '-o', building, SOURCE], { stdio: ['ignore', 'ignore', 'pipe'] })
    fs.renameSync(building, binary)
  } catch (err) {
    fs.rmSync(building, { force: true })
    const reason = err.code === 'ENOENT' ? 'no C compiler (cc) on PATH' : `cc failed: ${String(err.stderr).trim()}`
    return { skipped: reason }
  }
  return { binary }
}

// A socket-mode sender (see tools/measure/socket-mode.js) that hands each
// connection to its own sendfile-loop process as fd 3; one op writes a byte
// to the process and ends when it has sent the file and answered. The CPU
// and memory probe follow the first process (the benchmark runs one).
function cSendfileSender (binary) {
  return {
    async open ({ file, sockets }) {
      const { size } = fs.statSync(file)
      const loops = sockets.map((socket) => {
        const child = spawn(binary, [file], { stdio: ['pipe', 'pipe', 'inherit', socket] })
        socket.resume() // spawn() pauses a socket it shares; the sink's acks still arrive here
        const replies = []
        child.stdout.on('data', (chunk) => {
          for (let i = 0; i < chunk.length; i++) replies.shift().resolve(size)
        })
        child.on('exit', (code) => {
          for (const { reject } of replies.splice(0)) reject(new Error(`sendfile-loop exited with code ${code}`))
        })
        return { child, replies }
      })
      return {
        probe: processProbe(loops[0].child.pid),
        send: (slot) => new Promise((resolve, reject) => {
          const { child, replies } = loops[slot]
          replies.push({ resolve, reject })
          child.stdin.write('g')
        }),
        close: () => Promise.all(loops.map(({ child }) => new Promise((resolve) => {
          if (child.exitCode !== null) return resolve()
          child.once('exit', resolve)
          child.stdin.end()
        })))
      }
    }
  }
}

module.exports = { compileSendfileLoop, cSendfileSender }
