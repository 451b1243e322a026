// FrameRequest: where a request the native lane does not answer ends, so that
// the lane can lend it to Node's server alone (its head and its body, read as
// they come) and read the connection's next request only once Node's answer
// is written: one request at a time, as nginx reads them, whatever the method
// or body (see request_frame.cc). ParseRequestHead (request_head.h) reads the
// heads the lane may answer; this reads the framing of the others.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zcopy {

enum class FrameResult {
  kComplete,    // a whole head: head_length bytes, then its body
  kIncomplete,  // a valid prefix of one: read more (never past the limit)
  kDefer        // outside what it frames: hand the connection to Node
};

struct RequestFrame {
  uint32_t head_length = 0;  // bytes through the blank line's CRLF
  uint64_t body_length = 0;  // Content-Length, 0 without one
  bool chunked = false;      // Transfer-Encoding: chunked (request_body.h reads it)
  bool closes = false;       // Node closes the connection after its answer
};

// The largest Content-Length framed (2^53 - 1 has 16 digits: 15 keep every
// value exact in a double, as JavaScript hears it).
constexpr size_t kMaxContentLengthDigits = 15;

// Reads the framing of the request at the start of data[0, size). Pure: no
// allocation, no state kept between calls. Never reads past data + size.
FrameResult FrameRequest(const char* data, size_t size, RequestFrame* frame);

}  // namespace zcopy
