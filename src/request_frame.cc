// FrameRequest: the framing of an HTTP/1.x request the lane lends to Node
// (request_frame.h). It must find the end of the request exactly where
// llhttp (strict, Node's default) finds it, since the lane gives Node's
// parser those bytes and no more, and reads the next request after them.
// So it frames only what it can prove llhttp frames the same way, and defers
// everything else (the connection then goes to Node for good):
//   request line  a method of llhttp's that Node 20 to 26 all accept but
//                 CONNECT (a tunnel), one SP, an origin-form target of the
//                 bytes 0x21-0x7E but '#', one SP, "HTTP/1.1" or "HTTP/1.0",
//                 CRLF;
//   each field    a name of RFC 9110 tchars, ':', a value of HTAB, SP, VCHAR
//                 and obs-text, CRLF (no obs-fold, no bare LF);
//   the body      Content-Length at most once, its value 1 to
//                 kMaxContentLengthDigits digits (spaces or tabs before,
//                 spaces after); or, in HTTP/1.1 without Content-Length,
//                 Transfer-Encoding once, its value "chunked" alone (any
//                 case, spaces around): the body's framing is then read as
//                 it comes (request_body.h); none: no body (a request's,
//                 RFC 9112 §6.3);
//   the end       CRLF, within kMaxRequestHeadBytes.
//   Connection    at most one Connection or Proxy-Connection field (llhttp
//                 reads both alike), its value a list of tokens with
//                 "close" or "keep-alive" (not both) or neither, and others
//                 llhttp passes over ("keep-alive, TE"): the lane must know
//                 whether Node closes after its answer, and no "upgrade"
//                 token means no upgrade (llhttp upgrades on Upgrade with
//                 Connection: upgrade only), so an Upgrade field is framed
//                 as any other. Expect is Node's to answer (100 Continue,
//                 written through the twin, or 417).
// Deferred: any other Transfer-Encoding, and any other Connection.
#include "request_frame.h"

#include <cstring>

#include "request_bytes.h"
#include "request_head.h"

namespace zcopy {

namespace {

// llhttp's methods that Node 20.17 to 26 all accept (http.METHODS), but
// CONNECT (QUERY came with Node 22). Each is matched with the space after it,
// so no order is needed where one starts another.
constexpr const char* kMethods[] = {
    "GET",    "HEAD",      "POST",   "PUT",      "DELETE",    "OPTIONS",     "PATCH",  "TRACE",      "ACL",
    "BIND",   "CHECKOUT",  "COPY",   "LINK",     "LOCK",      "M-SEARCH",    "MERGE",  "MKACTIVITY", "MKCALENDAR",
    "MKCOL",  "MOVE",      "NOTIFY", "PROPFIND", "PROPPATCH", "PURGE",       "REBIND", "REPORT",     "SEARCH",
    "SOURCE", "SUBSCRIBE", "UNBIND", "UNLINK",   "UNLOCK",    "UNSUBSCRIBE",
};

// The method at data[0, size): kComplete with *at past its space, kIncomplete
// when the bytes so far start one of them, else kDefer.
FrameResult Method(const unsigned char* data, size_t size, size_t* at) {
  bool prefix = false;
  for (const char* method : kMethods) {
    const size_t length = std::strlen(method);
    const size_t have = size < length + 1 ? size : length + 1;
    size_t i = 0;
    while (i < have && i < length && data[i] == static_cast<unsigned char>(method[i])) ++i;
    if (i < have && i == length && data[i] == ' ') {
      *at = length + 1;
      return FrameResult::kComplete;
    }
    if (i == have && have <= length) prefix = true;
  }
  return prefix ? FrameResult::kIncomplete : FrameResult::kDefer;
}

FrameResult Literal(const unsigned char* data, size_t size, size_t* at, const char* literal) {
  return MatchLiteral<FrameResult>(data, size, at, literal);
}

// A Content-Length value (OWS trimmed already): → its number, or -1.
int64_t LengthOf(const unsigned char* value, size_t length) {
  if (length == 0 || length > kMaxContentLengthDigits) return -1;
  int64_t number = 0;
  for (size_t i = 0; i < length; ++i) {
    if (value[i] < '0' || value[i] > '9') return -1;
    number = number * 10 + (value[i] - '0');
  }
  return number;
}

// What a Connection value says, read as llhttp reads its list: each element
// between commas, spaces around it dropped, is "close", "keep-alive" or
// "upgrade" (any case) or another token, which llhttp passes over (TE, a
// hop-by-hop field's name). kConnectionNone: neither close nor keep-alive.
// Deferred: "upgrade", close and keep-alive both, an element that is not a
// token (empty, or bytes a token does not hold) and a tab anywhere, where
// the lane would have to prove more of llhttp's reading than this.
constexpr int kConnectionNone = 2;
int ConnectionTokens(const unsigned char* value, size_t length) {
  if (HasTab(value, length)) return -1;
  bool close = false;
  bool keep_alive = false;
  size_t at = 0;
  for (;;) {
    while (at < length && value[at] == ' ') ++at;
    const size_t start = at;
    while (at < length && IsTchar(value[at])) ++at;
    const size_t end = at;
    while (at < length && value[at] == ' ') ++at;
    if (end == start || (at < length && value[at] != ',')) return -1;
    if (NameIs(value + start, end - start, "upgrade")) return -1;
    close = close || NameIs(value + start, end - start, "close");
    keep_alive = keep_alive || NameIs(value + start, end - start, "keep-alive");
    if (at == length) break;
    ++at;  // the comma
  }
  if (close && keep_alive) return -1;
  return close ? 1 : keep_alive ? 0 : kConnectionNone;
}

FrameResult Frame(const unsigned char* data, size_t size, RequestFrame* frame) {
  size_t at = 0;
  FrameResult result = Method(data, size, &at);
  if (result != FrameResult::kComplete) return result;
  if (at == size) return FrameResult::kIncomplete;
  if (data[at] != '/') return FrameResult::kDefer;
  while (at < size && IsTargetByte(data[at])) ++at;
  if (at == size) return FrameResult::kIncomplete;
  result = Literal(data, size, &at, " HTTP/1.");
  if (result != FrameResult::kComplete) return result;
  if (at == size) return FrameResult::kIncomplete;
  if (data[at] != '0' && data[at] != '1') return FrameResult::kDefer;
  const bool http10 = data[at++] == '0';
  result = Literal(data, size, &at, "\r\n");
  if (result != FrameResult::kComplete) return result;

  bool has_length = false;
  bool chunked = false;
  int connection = -2;  // not sent; else what ConnectionTokens read
  for (;;) {
    if (at == size) return FrameResult::kIncomplete;
    if (data[at] == '\r') {
      result = Literal(data, size, &at, "\r\n");
      if (result != FrameResult::kComplete) return result;
      // llhttp refuses both (strict), and Transfer-Encoding in HTTP/1.0.
      if (chunked && (has_length || http10)) return FrameResult::kDefer;
      frame->head_length = static_cast<uint32_t>(at);
      frame->chunked = chunked;
      frame->closes = connection == 1 || (http10 && connection != 0);
      return FrameResult::kComplete;
    }
    const size_t name = at;
    while (at < size && IsTchar(data[at])) ++at;
    if (at == size) return FrameResult::kIncomplete;
    if (data[at] != ':' || at == name) return FrameResult::kDefer;
    const unsigned char* name_bytes = data + name;
    const size_t name_length = at - name;
    ++at;
    const ValueSpan value = ScanValue(data, size, &at);
    result = Literal(data, size, &at, "\r\n");
    if (result != FrameResult::kComplete) return result;
    if (NameIs(name_bytes, name_length, "content-length")) {
      // llhttp takes spaces after the digits, not tabs; a second one it refuses.
      const int64_t length = LengthOf(data + value.start, value.end - value.start);
      if (has_length || length < 0 || HasTab(data + value.end, at - 2 - value.end)) return FrameResult::kDefer;
      has_length = true;
      frame->body_length = static_cast<uint64_t>(length);
    } else if (NameIs(name_bytes, name_length, "transfer-encoding")) {
      const bool only_chunked = NameIs(data + value.start, value.end - value.start, "chunked");
      if (chunked || !only_chunked || HasTab(data + value.end, at - 2 - value.end)) return FrameResult::kDefer;
      chunked = true;
    } else if (NameIs(name_bytes, name_length, "connection") || NameIs(name_bytes, name_length, "proxy-connection")) {
      // (A tab after the value too: llhttp reads tokens otherwise.)
      const int tokens = ConnectionTokens(data + value.start, value.end - value.start);
      if (connection != -2 || tokens < 0 || HasTab(data + value.end, at - 2 - value.end)) return FrameResult::kDefer;
      connection = tokens;
    }
  }
}

}  // namespace

FrameResult FrameRequest(const char* data, size_t size, RequestFrame* frame) {
  return WithinHeadLimit<FrameResult>(data, size, frame, Frame);
}

}  // namespace zcopy
