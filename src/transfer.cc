// The JS wrapper of a transfer (see transfer.h): the class, its arguments, and
// the environment's registry, created with the class.
#include "transfer.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include "copy_range.h"
#include "env_registry.h"
#include "transfer_core.h"

namespace zcopy {

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

// An end given as a path (a string, UTF-8, or a Buffer) instead of a descriptor.
static Path PathArg(const Napi::Value& value, std::string* storage) {
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

// Arguments are validated by lib/sendfile.js; this only guards the types.
// new Transfer(outFd, inFd, offset, length, chunkSize, onProgress?, head?,
//              sourcePath?, destinationPath?, end?): an end given as a path has
// -1 as its descriptor; with a source path, `length` is fixed once it is open,
// from `offset` to `end` (inclusive, -1 for the end of the file).
Transfer::Transfer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Transfer>(info) {
  Napi::Env env = info.Env();
  const int out = info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : -1;
  const int in = info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : -1;
  const int64_t offset = info[2].IsNumber() ? info[2].As<Napi::Number>().Int64Value() : -1;
  const int64_t length = info[3].IsNumber() ? info[3].As<Napi::Number>().Int64Value() : -1;
  const int64_t chunk = info[4].IsNumber() ? info[4].As<Napi::Number>().Int64Value() : 0;
  std::string source_storage;
  std::string destination_storage;
  const Path source_path = PathArg(info[7], &source_storage);
  const Path destination_path = PathArg(info[8], &destination_storage);
  const int64_t end = info[9].IsNumber() ? info[9].As<Napi::Number>().Int64Value() : -1;
  if ((out < 0 && !destination_path.given) || (in < 0 && !source_path.given) || offset < 0 || length < 0 ||
      chunk <= 0) {
    Napi::TypeError::New(env,
                         "Transfer(outFd, inFd, offset, length, chunkSize, onProgress?, head?, sourcePath?, "
                         "destinationPath?, end?)")
        .ThrowAsJavaScriptException();
    return;
  }
  const char* head = nullptr;
  size_t head_length = 0;
  if (info[6].IsBuffer()) {
    Napi::Buffer<char> buffer = info[6].As<Napi::Buffer<char>>();
    head = buffer.Data();
    head_length = buffer.Length();
  }
  core_ = TransferCore::New(static_cast<EnvRegistry*>(info.Data()), out, in, offset, length, chunk, head,
                            head_length, source_path, destination_path, end);
  if (core_ == nullptr) {
    Napi::Error::New(env, "zcopy: out of memory").ThrowAsJavaScriptException();
    return;
  }
  if (info[5].IsFunction()) core_->SetProgress(env, info[5]);
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
