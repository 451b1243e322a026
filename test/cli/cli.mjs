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
function waitForOutput (cli, name, pattern) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(cli[name]())
      if (match) {
        cli.child[name].off('data', check)
        cli.child.off('exit', onExit)
        resolve(match)
      }
    }
    const onExit = () => reject(new Error(`the CLI exited before printing ${pattern}: ${cli[name]()}`))
    cli.child[name].on('data', check)
    cli.child.once('exit', onExit)
    check()
  })
}

export const waitForStdout = (cli, pattern) => waitForOutput(cli, 'stdout', pattern)
export const waitForStderr = (cli, pattern) => waitForOutput(cli, 'stderr', pattern)

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
