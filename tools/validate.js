'use strict'

const { UsageError } = require('./usage-error')

// yargs `coerce` functions: each returns the checked value or throws a
// UsageError naming the option.

// `--port=` (nothing after the '='): refused, not read as Number('') = 0.
function requireValue (name, value) {
  if (String(value).trim() === '') throw new UsageError(`--${name} needs a value, got nothing`)
}

function positiveNumber (name) {
  return (value) => {
    requireValue(name, value)
    const number = Number(value)
    if (!Number.isFinite(number) || number <= 0) {
      throw new UsageError(`--${name} must be a positive number, got '${value}'`)
    }
    return number
  }
}

function integerInRange (name, min, max) {
  return (value) => {
    requireValue(name, value)
    const number = Number(value)
    if (!Number.isInteger(number) || number < min || number > max) {
      throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got '${value}'`)
    }
    return number
  }
}

// A comma-separated list of allowed words; 'all' selects every one of them.
function choiceList (name, choices) {
  return (value) => {
    const items = String(value).split(',').map((item) => item.trim())
    if (items.includes('all')) return [...choices]
    for (const item of items) {
      if (!choices.includes(item)) {
        throw new UsageError(`unknown --${name} '${item}' (expected ${choices.join(', ')} or all)`)
      }
    }
    return choices.filter((choice) => items.includes(choice))
  }
}

// One of the allowed words.
function choice (name, choices) {
  return (value) => {
    const item = String(value).trim()
    if (!choices.includes(item)) throw new UsageError(`unknown --${name} '${item}' (expected ${choices.join(', ')})`)
    return item
  }
}

module.exports = { positiveNumber, integerInRange, choiceList, choice }
