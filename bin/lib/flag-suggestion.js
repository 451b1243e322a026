'use strict'

// A mistyped flag (`--singel`) named with the nearest known one, as yargs'
// recommendCommands does for commands: yargs says only "Unknown argument".

// Edit distance with adjacent transpositions (optimal string alignment):
// 'singel' is 1 from 'single'.
function distance (a, b) {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}

// The known flag nearest to `name`, or null when none is near: at most 2 edits,
// and fewer than half of the name's letters.
function nearestFlag (name, known) {
  let best = null
  let bestDistance = Infinity
  for (const flag of known) {
    const d = distance(name.toLowerCase(), flag)
    if (d < bestDistance && d <= 2 && d * 2 < name.length) {
      best = flag
      bestDistance = d
    }
  }
  return best
}

// yargs' "Unknown argument(s): a, b" → "unknown flag --singel: did you mean
// --single?" (and the other unknown arguments) when one of them was typed as a
// flag (`--singel`, `--singel=x`) near a known one (`known`: the command's long
// flag names); otherwise null.
function suggestFlags (message, args, known) {
  const match = /^Unknown arguments?: (.+)$/.exec(message)
  if (!match) return null
  const names = match[1].split(', ')
  // yargs also lists a --two-words flag's camelCase form (twoWords).
  const typed = names.filter((name) => name.length > 1 && args.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`)))
  const suggestions = typed.map((name) => [name, nearestFlag(name, known)]).filter(([, flag]) => flag !== null)
  if (suggestions.length === 0) return null
  const suggested = new Set(suggestions.map(([name]) => name))
  const others = names.filter((name) => !suggested.has(name) && !suggested.has(kebab(name)))
  return suggestions.map(([name, flag]) => `unknown flag --${name}: did you mean --${flag}?`).join('; ') +
    (others.length > 0 ? `; also unknown: ${others.join(', ')}` : '')
}

const kebab = (name) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)

module.exports = { suggestFlags }
