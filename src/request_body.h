// BodyFraming: where a lent request's body ends, as its bytes are read: a
// Content-Length's count, or a chunked body read as llhttp (strict) reads it,
// in a subset (request_body.cc). The lane gives Node's parser the body's
// bytes and reads the next request after them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zcopy {

class BodyFraming {
 public:
  // No body (the default), `length` bytes, or a chunked body.
  void ExpectLength(uint64_t length);
  void ExpectChunked();

  // → how many of data[0, size) belong to the body, up to its end. Once
  // Failed(), the bytes were outside the subset: where the body ends is not
  // known (nothing more is taken).
  size_t Take(const char* data, size_t size);

  // How much to read next, at most `most`: no further than the body's end
  // where it is known (a length, a chunk's data and its CRLF), else `some`
  // (a chunk's size line may be followed by anything).
  size_t ReadSize(size_t most, size_t some) const;

  bool Done() const { return state_ == State::kDone; }
  bool Failed() const { return state_ == State::kFailed; }

 private:
  enum class State : uint8_t {
    kLength,  // Content-Length bytes: left_ of them
    kSize,    // a chunk's size, in hex (digits_ so far)
    kSizeLf,  // its CR read
    kData,    // left_ bytes of the chunk's data
    kDataCr,  // the CRLF after the data
    kDataLf,
    kLineStart,  // after the last chunk: a trailer field or the final CRLF
    kTrailer,    // within a trailer field's line
    kTrailerLf,  // its CR read
    kEndLf,      // the final CR read
    kDone,
    kFailed
  };
  bool Step(unsigned char c);

  State state_ = State::kDone;
  uint64_t left_ = 0;
  uint64_t size_ = 0;
  int digits_ = 0;
  bool colon_ = false;  // the trailer line's name has ended
  bool named_ = false;  // the trailer line's name has a byte
};

}  // namespace zcopy
