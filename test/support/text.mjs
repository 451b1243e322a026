// Text that compresses about 3:1, `size` bytes, different for each `seed`:
// words drawn from a vocabulary by a seeded generator.
export function text (size, seed = 'a') {
  let state = 0
  for (const c of seed) state = (state * 31 + c.charCodeAt(0)) >>> 0
  const next = () => { state = (state * 1103515245 + 12345) >>> 0; return state >>> 8 }
  const vocabulary = Array.from({ length: 512 }, (_, i) => `${seed}${(i * 2654435761 >>> 0).toString(36)}`)
  const parts = []
  let length = 0
  while (length < size) {
    const word = next() % 7 === 0 ? `${next() % 100000}` : vocabulary[next() % vocabulary.length]
    const piece = next() % 11 === 0 ? `${word};\n` : `${word} `
    parts.push(piece)
    length += piece.length
  }
  return Buffer.from(parts.join('')).subarray(0, size)
}
