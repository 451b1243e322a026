// The JS wrapper of a transfer (see transfer.h): the class, its arguments, and
// the environment's registry, created with the class.
#include "transfer.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include "descriptors.h"
#include "env_registry.h"
#include "transfer_core.h"

namespace zcopy {

namespace {

constexpr const char* kUsage =
    "Transfer({ outFd, inFd, offset, length, chunkSize, onProgress?, head?, sourcePath?, destinationPath?, end? })";

// A number option as an integer; `fallback` when it is no number.
int64_t IntegerOption(const Napi::Object& options, const char* name, int64_t fallback) {
  Napi::Value value = options.Get(name);
  return value.IsNumber() ? value.As<Napi::Number>().Int64Value() : fallback;
}

// An end given as a path (a string, UTF-8, or a Buffer) instead of a descriptor.
Path PathArg(const Napi::Value& value, std::string* storage) {
  Path path;
  if (value.IsBuffer()) {
    Napi::Buffer<char> buffer = value.As<Napi::Buffer<char>>();
    path.given = true;
    path.data = buffer.Data();
    path.length = buffer.Length();
  } else if (value.IsString()) {
    *storage = value.As<Napi::String>().Utf8Value();
    path.given = true;
    path.data = storage->data();
    path.length = storage->size();
  }
  return path;
}

}  // namespace

Napi::Function Transfer::Init(Napi::Env env) {
  auto* registry = new (std::nothrow) EnvRegistry();
  if (registry == nullptr) {
    Napi::Error::New(env, "zcopy: out of memory").ThrowAsJavaScriptException();
    return Napi::Function();
  }
  registry->env = env;
  if (napi_get_uv_event_loop(env, &registry->loop) != napi_ok ||
      napi_add_async_cleanup_hook(env, EnvRegistry::OnEnvTeardown, registry, &registry->hook) != napi_ok) {
    delete registry;
    Napi::Error::New(env, "zcopy: cannot register the environment's cleanup hook").ThrowAsJavaScriptException();
    return Napi::Function();
  }
  return DefineClass(env, "Transfer",
                     {
                         InstanceMethod<&Transfer::Start>("start"),
                         InstanceMethod<&Transfer::Abort>("abort"),
                         InstanceMethod<&Transfer::HeadWritten>("headWritten"),
                         InstanceMethod<&Transfer::Settled>("settled"),
                         InstanceMethod<&Transfer::TakeOpened>("takeOpened"),
                     },
                     registry);
}

// Options are validated by lib/engine/sendfile.js; this only guards the types.
// new Transfer({ outFd, inFd, offset, length, chunkSize, onProgress?, head?,
//                sourcePath?, destinationPath?, end? }): an end given as a path
// has -1 as its descriptor; with a source path, `length` is fixed once it is
// open, from `offset` to `end` (inclusive, -1 for the end of the file).
Transfer::Transfer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Transfer>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) {
    Napi::TypeError::New(env, kUsage).ThrowAsJavaScriptException();
    return;
  }
  const Napi::Object options = info[0].As<Napi::Object>();
  TransferSpec spec;
  spec.out_fd = static_cast<int>(IntegerOption(options, "outFd", -1));
  spec.in_fd = static_cast<int>(IntegerOption(options, "inFd", -1));
  spec.offset = IntegerOption(options, "offset", -1);
  spec.length = IntegerOption(options, "length", -1);
  spec.chunk_size = IntegerOption(options, "chunkSize", 0);
  std::string source_storage;
  std::string destination_storage;
  spec.source_path = PathArg(options.Get("sourcePath"), &source_storage);
  spec.destination_path = PathArg(options.Get("destinationPath"), &destination_storage);
  spec.end = IntegerOption(options, "end", -1);
  if (env.IsExceptionPending()) return;  // a getter threw
  if ((spec.out_fd < 0 && !spec.destination_path.given) || (spec.in_fd < 0 && !spec.source_path.given) ||
      spec.offset < 0 || spec.length < 0 || spec.chunk_size <= 0) {
    Napi::TypeError::New(env, kUsage).ThrowAsJavaScriptException();
    return;
  }
  Napi::Value head = options.Get("head");
  if (head.IsBuffer()) {
    Napi::Buffer<char> buffer = head.As<Napi::Buffer<char>>();
    spec.head = buffer.Data();
    spec.head_length = buffer.Length();
  }
  core_ = TransferCore::New(static_cast<EnvRegistry*>(info.Data()), spec);
  if (core_ == nullptr) {
    Napi::Error::New(env, "zcopy: out of memory").ThrowAsJavaScriptException();
    return;
  }
  Napi::Value on_progress = options.Get("onProgress");
  if (on_progress.IsFunction()) core_->SetProgress(env, on_progress);
}

Transfer::~Transfer() {
  if (core_ != nullptr) core_->Detach();
}

Napi::Value Transfer::Start(const Napi::CallbackInfo& info) {
  if (core_ == nullptr) return info.Env().Undefined();
  napi_value promise = core_->Start(info.Env());
  return promise == nullptr ? info.Env().Undefined() : Napi::Value(info.Env(), promise);
}

void Transfer::Abort(const Napi::CallbackInfo& info) {
  if (core_ != nullptr) core_->Abort(info.Env());
}

// → [sourceFd, destinationFd]: what a settled transfer opened by path and kept
// for JavaScript (ERR_ZCOPY_NOT_REGULAR, or EINVAL/ENOSYS/ENOTSUP before any
// byte), now the caller's to close; -1 where there is none.
Napi::Value Transfer::TakeOpened(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int in = -1;
  int out = -1;
  if (core_ != nullptr) core_->TakeOpened(&in, &out);
  Napi::Array result = Napi::Array::New(env, 2);
  result.Set(0u, Napi::Number::New(env, in));
  result.Set(1u, Napi::Number::New(env, out));
  return result;
}

Napi::Value Transfer::HeadWritten(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), core_ == nullptr ? 0.0 : static_cast<double>(core_->head_written()));
}

// Whether the promise is already settled: true when start() sent everything (or
// failed) from the event loop, so there is nothing left to cancel.
Napi::Value Transfer::Settled(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), core_ == nullptr || core_->settled());
}

}  // namespace zcopy
