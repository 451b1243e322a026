// BodyFraming (request_body.h). The chunked subset, each part one llhttp
// (strict, Node's default) reads the same way:
//   chunk       1 to 15 hex digits, CRLF (no extension, no space: llhttp
//               reads extensions, but a body that has one stops here),
//               that many bytes, CRLF;
//   last chunk  "0" (or more zeros), CRLF;
//   trailers    fields of a token name, ':', value bytes (HTAB, SP, VCHAR,
//               obs-text), CRLF;
//   the end     CRLF.
// Anything else fails: before the request is lent, the connection is then
// handed to Node whole (which decides); once lent, it is closed.
#include "request_body.h"

#include "request_bytes.h"

namespace zcopy {

namespace {

constexpr int kMaxSizeDigits = 15;

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void BodyFraming::ExpectLength(uint64_t length) {
  left_ = length;
  state_ = length == 0 ? State::kDone : State::kLength;
}

void BodyFraming::ExpectChunked() {
  state_ = State::kSize;
  size_ = 0;
  digits_ = 0;
}

size_t BodyFraming::ReadSize(size_t most, size_t some) const {
  uint64_t known = some;
  if (state_ == State::kLength) known = left_;
  if (state_ == State::kData) known = left_ + 2;
  return known < most ? static_cast<size_t>(known) : most;
}

size_t BodyFraming::Take(const char* data, size_t size) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  size_t at = 0;
  while (at < size && state_ != State::kDone && state_ != State::kFailed) {
    if (state_ == State::kLength || state_ == State::kData) {
      const uint64_t rest = size - at;
      const uint64_t take = left_ < rest ? left_ : rest;
      left_ -= take;
      at += static_cast<size_t>(take);
      if (left_ == 0) state_ = state_ == State::kLength ? State::kDone : State::kDataCr;
      continue;
    }
    if (!Step(bytes[at])) {
      state_ = State::kFailed;
      return at;
    }
    ++at;
  }
  return at;
}

// One byte of the chunked framing: → false when it is outside the subset.
bool BodyFraming::Step(unsigned char c) {
  switch (state_) {
    case State::kSize: {
      const int value = HexValue(c);
      if (value >= 0 && digits_ < kMaxSizeDigits) {
        size_ = size_ * 16 + static_cast<uint64_t>(value);
        ++digits_;
        return true;
      }
      if (c != '\r' || digits_ == 0) return false;
      state_ = State::kSizeLf;
      return true;
    }
    case State::kSizeLf:
      if (c != '\n') return false;
      left_ = size_;
      state_ = size_ == 0 ? State::kLineStart : State::kData;
      size_ = 0;
      digits_ = 0;
      return true;
    case State::kDataCr:
      state_ = State::kDataLf;
      return c == '\r';
    case State::kDataLf:
      state_ = State::kSize;
      return c == '\n';
    case State::kLineStart:
      if (c == '\r') {
        state_ = State::kEndLf;
        return true;
      }
      colon_ = false;
      named_ = false;
      state_ = State::kTrailer;
      return Step(c);
    case State::kTrailer:
      if (!colon_) {
        if (IsTchar(c)) {
          named_ = true;
          return true;
        }
        colon_ = c == ':' && named_;
        return colon_;
      }
      if (c == '\r') {
        state_ = State::kTrailerLf;
        return true;
      }
      return IsValueByte(c);
    case State::kTrailerLf:
      state_ = State::kLineStart;
      return c == '\n';
    case State::kEndLf:
      state_ = State::kDone;
      return c == '\n';
    default:
      return false;
  }
}

}  // namespace zcopy
