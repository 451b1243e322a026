// Runs the real CLI (node bin/zcopy.js) as a child process.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'

export const CLI = fileURLToPath(new URL('../../bin/zcopy.js', import.meta.url))

// Starts the CLI (`cli`: another copy's bin/zcopy.js) in a process group of its
// own (see groupAlive); `output()` resolves with { code, signal, stdout, stderr }
// once it has exited and its stdout and stderr are read to their end ('close':
// at 'exit' the last of its output may still be in the pipes).
export function startCli (args, { env = {}, cli = CLI } = {}) {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  const closed = once(child, 'close')
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async output () {
      const [code, signal] = await closed
      return { code, signal, stdout, stderr }
    }
  }
}

function groupAlive (pid) {
  try {
    process.kill(-pid, 0)
    return true
  } catch (err) {
    if (err.code === 'ESRCH') return false
    throw err
  }
}

// Resolves whether every process of the CLI's group (itself and the sinks and
// measurement processes it started) was gone within `ms` of the call. A killed
// child can take seconds to be torn down and reaped on a loaded 2-core CI
// machine (a 2 s bound failed there once); one left behind stays for ever.
export async function groupGone (cli, ms = 10_000) {
  const deadline = Date.now() + ms
  while (groupAlive(cli.child.pid)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

export function runCli (args, options) {
  return startCli(args, options).output()
}

// Resolves with the first match of `pattern` in the child's stdout (or stderr).
// `within`: ms after which it rejects instead (shorter than the test's own
// timeout, so that a test which waits in vain still stops its CLI in `finally`).
function waitForOutput (cli, name, pattern, { within } = {}) {
  return new Promise((resolve, reject) => {
    let timer = null
    const settle = () => {
      cli.child[name].off('data', check)
      cli.child.off('exit', onExit)
      clearTimeout(timer)
    }
    const check = () => {
      const match = pattern.exec(cli[name]())
      if (match) {
        settle()
        resolve(match)
      }
    }
    const onExit = () => {
      settle()
      reject(new Error(`the CLI exited before printing ${pattern}: ${cli[name]()}`))
    }
    cli.child[name].on('data', check)
    cli.child.once('exit', onExit)
    if (within !== undefined) {
      timer = setTimeout(() => {
        settle()
        reject(new Error(`the CLI printed no ${pattern} within ${within} ms: ${cli[name]()}`))
      }, within)
    }
    check()
  })
}

export const waitForStdout = (cli, pattern, options) => waitForOutput(cli, 'stdout', pattern, options)
export const waitForStderr = (cli, pattern, options) => waitForOutput(cli, 'stderr', pattern, options)

// Bad input: nothing on stdout, exactly one line on stderr that starts with the
// program's name (`zcopy`, or a bench script's path), no stack trace, exit code 2.
export function expectOneLineUsageError ({ code, stdout, stderr }, pattern, program = 'zcopy') {
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr.endsWith('\n')).toBe(true)
  expect(stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(stderr.startsWith(`${program}: `)).toBe(true)
  expect(stderr).not.toMatch(/\n\s+at /)
  expect(stderr).toMatch(pattern)
}
