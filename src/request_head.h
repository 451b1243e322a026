// ParseRequestHead: the native lane's reader of an HTTP/1.x request head
// (see request_head.cc). A strict subset: it says Complete only for a head it
// can prove it reads exactly as Node's llhttp does, and Defer for every other
// byte sequence, which then goes to Node's own parser unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zcopy {

// Node's default --max-http-header-size (16 KiB), and a count of fields well
// below Node's default server.maxHeadersCount (2000), past which Node drops
// fields rather than refusing the head.
constexpr size_t kMaxRequestHeadBytes = 16 * 1024;
constexpr size_t kMaxRequestHeadFields = 100;

enum class HeadResult {
  kComplete,    // a whole head of the subset; head->length bytes long
  kIncomplete,  // a valid prefix of one: read more (never past the limit)
  kDefer        // outside the subset: hand these bytes to Node
};

enum class RequestMethod : uint8_t { kGet, kHead };

// Where a value lies in the buffer that was parsed; `present` false when the
// field was not sent (a field sent with an empty value is present, length 0).
// A header's value has its surrounding spaces and tabs taken off.
struct HeadSpan {
  uint32_t offset = 0;
  uint32_t length = 0;
  bool present = false;
};

struct RequestHead {
  RequestMethod method = RequestMethod::kGet;
  uint8_t version_minor = 1;  // HTTP/1.0 or HTTP/1.1
  uint32_t length = 0;        // bytes through the blank line's CRLF
  HeadSpan target;            // origin-form, as sent
  HeadSpan host;
  HeadSpan accept_encoding;
  HeadSpan if_none_match;
  HeadSpan if_modified_since;
  HeadSpan range;
  HeadSpan connection;
  // Whether Cache-Control was sent (its no-cache fails If-None-Match and
  // If-Modified-Since); any number of copies, which Node joins.
  bool cache_control = false;
};

// Reads the head at the start of data[0, size). Pure: no allocation, no state
// kept between calls; on kComplete every span of *head lies within
// [0, head->length). Never reads past data + size.
HeadResult ParseRequestHead(const char* data, size_t size, RequestHead* head);

}  // namespace zcopy
