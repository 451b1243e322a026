// ParseRequestHead: reads a request head of the subset below, byte by byte,
// and answers Defer for anything else, so that Node's llhttp (which then gets
// the same bytes unchanged) decides every case the subset does not prove.
//
// The subset, each part one llhttp (strict, Node's default: no
// --insecure-http-parser) reads the same way:
//   request line  "GET" or "HEAD", one SP, an origin-form target of the bytes
//                 0x21-0x7E but '#' (llhttp's strict URL characters and '?'),
//                 one SP, "HTTP/1.1" or "HTTP/1.0", CRLF;
//   each field    a name of RFC 9110 tchars, ':', spaces and tabs, a value of
//                 HTAB, SP, VCHAR and obs-text (llhttp's header characters),
//                 CRLF; the value's leading spaces and tabs are llhttp's to
//                 skip and its trailing ones Node's to trim, so both go
//                 (but a tab after Connection's value, which llhttp does
//                 not read past: deferred);
//   the end       CRLF, with exactly one Host field among at most
//                 kMaxRequestHeadFields, all within kMaxRequestHeadBytes.
// Fields that change what llhttp or Node's server does with the message (a
// body, an upgrade, 100-continue, conditions the lane does not evaluate,
// Proxy-Connection, which llhttp reads as Connection) and a second copy of a
// field whose value the lane reads (Node joins some, drops others) are
// deferred.
//
// Incomplete means: the bytes so far are the start of some head of the subset
// (the parser defers as soon as none can follow), and fewer than
// kMaxRequestHeadBytes bytes were given.
#include "request_head.h"

#include "request_bytes.h"

namespace zcopy {

namespace {

// Names whose presence takes the head out of the subset.
constexpr const char* kDeferredNames[] = {
    "content-length", "transfer-encoding",   "expect",   "upgrade",
    "if-match",       "if-unmodified-since", "if-range", "proxy-connection",
};

HeadResult Match(const unsigned char* data, size_t size, size_t* at, const char* literal) {
  return MatchLiteral<HeadResult>(data, size, at, literal);
}

// The parse of data[0, size), size at most kMaxRequestHeadBytes (so every
// offset fits a uint32_t); kIncomplete when the bytes run out in agreement.
HeadResult Parse(const unsigned char* data, size_t size, RequestHead* head) {
  size_t at = 0;
  if (size == 0) return HeadResult::kIncomplete;
  HeadResult result;
  if (data[0] == 'G') {
    head->method = RequestMethod::kGet;
    result = Match(data, size, &at, "GET ");
  } else {
    head->method = RequestMethod::kHead;
    result = Match(data, size, &at, "HEAD ");
  }
  if (result != HeadResult::kComplete) return result;

  const size_t target = at;
  if (at == size) return HeadResult::kIncomplete;
  if (data[at] != '/') return HeadResult::kDefer;
  while (at < size && IsTargetByte(data[at])) ++at;
  if (at == size) return HeadResult::kIncomplete;
  head->target = {static_cast<uint32_t>(target), static_cast<uint32_t>(at - target), true};

  result = Match(data, size, &at, " HTTP/1.");
  if (result != HeadResult::kComplete) return result;
  if (at == size) return HeadResult::kIncomplete;
  if (data[at] != '0' && data[at] != '1') return HeadResult::kDefer;
  head->version_minor = static_cast<uint8_t>(data[at] - '0');
  ++at;
  result = Match(data, size, &at, "\r\n");
  if (result != HeadResult::kComplete) return result;

  size_t fields = 0;
  for (;;) {
    if (at == size) return HeadResult::kIncomplete;
    if (data[at] == '\r') {
      // The blank line; without a Host field no completion is in the subset.
      if (!head->host.present) return HeadResult::kDefer;
      result = Match(data, size, &at, "\r\n");
      if (result != HeadResult::kComplete) return result;
      head->length = static_cast<uint32_t>(at);
      return HeadResult::kComplete;
    }
    if (++fields > kMaxRequestHeadFields) return HeadResult::kDefer;

    // The last field there may be, with no Host yet: only Host completes it.
    const bool must_be_host = fields == kMaxRequestHeadFields && !head->host.present;
    const size_t name = at;
    while (at < size && IsTchar(data[at])) ++at;
    if (must_be_host && !NameStarts(data + name, at - name, "host")) return HeadResult::kDefer;
    if (at == size) return HeadResult::kIncomplete;
    // Not a token up to the colon: an empty name, a space before the colon,
    // an obs-fold line, a bare LF, a control byte.
    if (data[at] != ':' || at == name) return HeadResult::kDefer;
    const unsigned char* name_bytes = data + name;
    const size_t name_length = at - name;
    for (const char* deferred : kDeferredNames) {
      if (NameIs(name_bytes, name_length, deferred)) return HeadResult::kDefer;
    }
    HeadSpan* span = nullptr;
    if (NameIs(name_bytes, name_length, "host")) {
      span = &head->host;
    } else if (NameIs(name_bytes, name_length, "accept-encoding")) {
      span = &head->accept_encoding;
    } else if (NameIs(name_bytes, name_length, "if-none-match")) {
      span = &head->if_none_match;
    } else if (NameIs(name_bytes, name_length, "if-modified-since")) {
      span = &head->if_modified_since;
    } else if (NameIs(name_bytes, name_length, "range")) {
      span = &head->range;
    } else if (NameIs(name_bytes, name_length, "connection")) {
      span = &head->connection;
    } else if (NameIs(name_bytes, name_length, "cache-control")) {
      head->cache_control = true;
    }
    if ((span != nullptr && span->present) || (must_be_host && span != &head->host)) return HeadResult::kDefer;
    ++at;

    const ValueSpan value = ScanValue(data, size, &at);
    // llhttp reads a Connection token followed by a tab as another token
    // ("close\t" keeps an HTTP/1.1 connection, "keep-alive\t" does not keep
    // an HTTP/1.0 one); trailing spaces leave the token as it is. Known once
    // the value has ended (at a byte that is not the value's).
    if (span == &head->connection && at < size && HasTab(data + value.end, at - value.end)) {
      return HeadResult::kDefer;
    }
    result = Match(data, size, &at, "\r\n");
    if (result != HeadResult::kComplete) return result;
    if (span != nullptr) {
      *span = {static_cast<uint32_t>(value.start), static_cast<uint32_t>(value.end - value.start), true};
    }
  }
}

}  // namespace

HeadResult ParseRequestHead(const char* data, size_t size, RequestHead* head) {
  // Node refuses a head longer than its limit.
  return WithinHeadLimit<HeadResult>(data, size, head, Parse);
}

}  // namespace zcopy
