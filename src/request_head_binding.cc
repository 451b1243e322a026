// parseRequestHead(buffer) → { result, length, method, versionMinor, target,
// host, acceptEncoding, ifNoneMatch, ifModifiedSince, range, connection }:
// the request-head parser's answer for a buffer, for its tests
// (test/engine/request-head*.test.mjs), which hold it against Node's own
// parser. `result` is 'complete', 'incomplete' or 'defer'; the other fields
// are there only for 'complete', the values as latin1 strings (Node's reading
// of header bytes) or undefined for a field not sent. The native lane calls
// ParseRequestHead itself, without this.
// frameRequest(buffer) → { result, length, bodyLength, chunked, closes,
// body }: the same for FrameRequest (request_frame.h), for
// test/engine/request-frame*.test.mjs, with what BodyFraming
// (request_body.h) makes of the bytes after the head: body 'done' (then
// bodyLength is where it ended, for a chunked body too), 'more' or 'failed'.
#include "request_head_binding.h"

#include "request_body.h"
#include "request_frame.h"
#include "request_head.h"

namespace zcopy {

namespace {

// The value as a latin1 string, undefined when the field was not sent.
void SetSpan(Napi::Object out, const char* key, const char* data, const HeadSpan& span) {
  napi_value value = nullptr;
  if (span.present) napi_create_string_latin1(out.Env(), data + span.offset, span.length, &value);
  out.Set(key, value == nullptr ? out.Env().Undefined() : Napi::Value(out.Env(), value));
}

// Whether info[0] is a Buffer or Uint8Array; else a TypeError is thrown.
bool IsBytes(const Napi::CallbackInfo& info) {
  if (info[0].IsTypedArray() && info[0].As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) return true;
  Napi::TypeError error = Napi::TypeError::New(info.Env(), "The \"buffer\" argument must be a Buffer or Uint8Array");
  error.Set("code", Napi::String::New(info.Env(), "ERR_INVALID_ARG_TYPE"));
  error.ThrowAsJavaScriptException();
  return false;
}

const char* ResultName(bool complete, bool incomplete) {
  return complete ? "complete" : incomplete ? "incomplete" : "defer";
}

Napi::Value ParseRequestHeadJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!IsBytes(info)) return env.Undefined();
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  const char* data = reinterpret_cast<const char*>(bytes.Data());
  RequestHead head;
  const HeadResult result = ParseRequestHead(data, bytes.ByteLength(), &head);
  Napi::Object out = Napi::Object::New(env);
  out.Set("result",
          Napi::String::New(env, ResultName(result == HeadResult::kComplete, result == HeadResult::kIncomplete)));
  if (result != HeadResult::kComplete) return out;
  out.Set("length", Napi::Number::New(env, head.length));
  out.Set("method", Napi::String::New(env, head.method == RequestMethod::kGet ? "GET" : "HEAD"));
  out.Set("versionMinor", Napi::Number::New(env, head.version_minor));
  SetSpan(out, "target", data, head.target);
  SetSpan(out, "host", data, head.host);
  SetSpan(out, "acceptEncoding", data, head.accept_encoding);
  SetSpan(out, "ifNoneMatch", data, head.if_none_match);
  SetSpan(out, "ifModifiedSince", data, head.if_modified_since);
  SetSpan(out, "range", data, head.range);
  SetSpan(out, "connection", data, head.connection);
  return out;
}

Napi::Value FrameRequestJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!IsBytes(info)) return env.Undefined();
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  RequestFrame frame;
  const FrameResult result = FrameRequest(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength(), &frame);
  Napi::Object out = Napi::Object::New(env);
  out.Set("result",
          Napi::String::New(env, ResultName(result == FrameResult::kComplete, result == FrameResult::kIncomplete)));
  if (result != FrameResult::kComplete) return out;
  BodyFraming body;
  if (frame.chunked) {
    body.ExpectChunked();
  } else {
    body.ExpectLength(frame.body_length);
  }
  const size_t taken = body.Take(reinterpret_cast<const char*>(bytes.Data()) + frame.head_length,
                                 bytes.ByteLength() - frame.head_length);
  out.Set("length", Napi::Number::New(env, frame.head_length));
  out.Set("bodyLength",
          Napi::Number::New(env, frame.chunked ? static_cast<double>(taken) : static_cast<double>(frame.body_length)));
  out.Set("chunked", Napi::Boolean::New(env, frame.chunked));
  out.Set("body", Napi::String::New(env, body.Done() ? "done" : body.Failed() ? "failed" : "more"));
  out.Set("closes", Napi::Boolean::New(env, frame.closes));
  return out;
}

}  // namespace

Napi::Function ParseRequestHeadFunction(Napi::Env env) {
  return Napi::Function::New(env, ParseRequestHeadJs, "parseRequestHead");
}

Napi::Function FrameRequestFunction(Napi::Env env) {
  return Napi::Function::New(env, FrameRequestJs, "frameRequest");
}

}  // namespace zcopy
