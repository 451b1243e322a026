// The byte classes and name comparisons both request readers use
// (request_head.cc, the heads the lane answers; request_frame.cc, the
// framing of those it lends), as llhttp (strict) reads them.
#pragma once

#include <cstddef>
#include <cstring>

#include "request_head.h"

namespace zcopy {

// The RFC 9110 token characters: "!#$%&'*+-.^_`|~", digits and letters.
inline bool IsTchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

// A target byte: printable ASCII but SP and '#' (a fragment, which llhttp
// reads in a state of its own).
inline bool IsTargetByte(unsigned char c) {
  return c > 0x20 && c < 0x7F && c != '#';
}

// A field value byte: HTAB, SP, VCHAR, obs-text; no other control, no DEL.
inline bool IsValueByte(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7F);
}

inline bool IsOws(unsigned char c) {
  return c == ' ' || c == '\t';
}

inline bool HasTab(const unsigned char* bytes, size_t length) {
  return std::memchr(bytes, '\t', length) != nullptr;
}

// Whether name[0, length) is the start of `lower` (a lowercase literal),
// ignoring ASCII case.
inline bool NameStarts(const unsigned char* name, size_t length, const char* lower) {
  for (size_t i = 0; i < length; ++i) {
    if (lower[i] == '\0') return false;
    unsigned char c = name[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c + ('a' - 'A'));
    if (c != static_cast<unsigned char>(lower[i])) return false;
  }
  return true;
}

// Whether name[0, length) is `lower`, ignoring ASCII case.
inline bool NameIs(const unsigned char* name, size_t length, const char* lower) {
  return NameStarts(name, length, lower) && lower[length] == '\0';
}

// Outcome of matching `literal` at data[*at] (Result: HeadResult or
// FrameResult): kComplete when all of it is there (and *at moves past it),
// kIncomplete when the input ends in agreement, else kDefer.
template <typename Result>
Result MatchLiteral(const unsigned char* data, size_t size, size_t* at, const char* literal) {
  for (; *literal != '\0'; ++literal, ++*at) {
    if (*at == size) return Result::kIncomplete;
    if (data[*at] != static_cast<unsigned char>(*literal)) return Result::kDefer;
  }
  return Result::kComplete;
}

// A field's value, from data[*at] just after its colon: the spaces and tabs
// before it skipped (llhttp's to skip), its bytes read up to the first that
// is not a value byte (*at moves there). → [start, end): the value without
// the spaces and tabs after it (Node's to trim).
struct ValueSpan {
  size_t start;
  size_t end;
};

inline ValueSpan ScanValue(const unsigned char* data, size_t size, size_t* at) {
  while (*at < size && IsOws(data[*at])) ++*at;
  ValueSpan value{*at, *at};
  for (; *at < size && IsValueByte(data[*at]); ++*at) {
    if (!IsOws(data[*at])) value.end = *at + 1;
  }
  return value;
}

// Runs a reader (read(bytes, size, &result) → Result) on data[0, size) as
// Node bounds a head: the bytes past kMaxRequestHeadBytes are never needed,
// and a head they would complete is deferred. *out is set only on kComplete.
template <typename Result, typename Out, typename Read>
Result WithinHeadLimit(const char* data, size_t size, Out* out, Read read) {
  const size_t readable = size < kMaxRequestHeadBytes ? size : kMaxRequestHeadBytes;
  Out parsed;
  const Result result = read(reinterpret_cast<const unsigned char*>(data), readable, &parsed);
  if (result == Result::kComplete) {
    *out = parsed;
    return result;
  }
  if (result == Result::kIncomplete && size >= kMaxRequestHeadBytes) return Result::kDefer;
  return result;
}

}  // namespace zcopy
