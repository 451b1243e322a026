#include "transfer.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "errors.h"

namespace zcopy {

namespace {

// Linux moves at most this much per sendfile(2) call.
constexpr int64_t kMaxSendfileCount = 0x7ffff000;

// At most this much is sent straight from the event loop, when the whole of it
// is in the page cache: small responses then cost no thread-pool round trip.
constexpr int64_t kEagerLimit = 256 * 1024;

#ifndef __NR_cachestat
#define __NR_cachestat 451  // the same number on every architecture that has it
#endif

struct CachestatRange {
  uint64_t off;
  uint64_t len;
};

struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

std::atomic<bool> cachestat_missing{false};

// Whether every page of the range is in the page cache (cachestat(2), Linux
// 6.5+), so that sendfile from it cannot wait for the disk. False when unknown.
bool RangeCached(int fd, int64_t offset, int64_t length) {
  if (length <= 0 || cachestat_missing.load(std::memory_order_relaxed)) return false;
  CachestatRange range{static_cast<uint64_t>(offset), static_cast<uint64_t>(length)};
  Cachestat stat{};
  if (syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) {
    if (errno == ENOSYS) cachestat_missing.store(true, std::memory_order_relaxed);
    return false;
  }
  static const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t pages = (offset + length - 1) / page - offset / page + 1;
  return stat.nr_cache >= static_cast<uint64_t>(pages);
}

int DupCloexec(int fd, UniqueFd* out) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return errno;
  *out = UniqueFd(copy);
  return 0;
}

// A blocking pipe or character device gets a private non-blocking open file
// description through /proc, so that writability can be awaited on the event
// loop without changing the caller's descriptor (O_NONBLOCK is per description).
int ReopenNonBlocking(int fd, UniqueFd* out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  int copy = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (copy < 0) return errno;
  *out = UniqueFd(copy);
  return 0;
}

// Private descriptor for the destination, and how it takes bytes.
int OpenSink(int fd, UniqueFd* out, Sink* sink) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return errno;
  bool nonblocking = (flags & O_NONBLOCK) != 0;

  if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
    *sink = Sink::kFile;
    return DupCloexec(fd, out);
  }
  if (nonblocking) {
    *sink = Sink::kStream;
    return DupCloexec(fd, out);
  }
  if (!S_ISSOCK(st.st_mode) && ReopenNonBlocking(fd, out) == 0) {
    *sink = Sink::kStream;
    return 0;
  }
  // A blocking socket (Node never makes one) or a pipe /proc cannot reopen:
  // written with blocking calls from the pool, one bounded chunk per job.
  *sink = Sink::kFile;
  return DupCloexec(fd, out);
}

// Whether the caller's descriptor is a socket or pipe that never blocks: the only
// kind the eager path writes to from the event loop.
bool IsNonBlockingStream(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return false;
  int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_NONBLOCK) != 0;
}

int OpenSource(int fd, UniqueFd* in) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  return DupCloexec(fd, in);
}

}  // namespace

Napi::Function Transfer::Init(Napi::Env env) {
  return DefineClass(env, "Transfer",
                     {
                         InstanceMethod<&Transfer::Start>("start"),
                         InstanceMethod<&Transfer::Abort>("abort"),
                         InstanceMethod<&Transfer::HeadWritten>("headWritten"),
                         InstanceMethod<&Transfer::Settled>("settled"),
                     });
}

// Arguments are validated by lib/sendfile.js; this only guards the types.
Transfer::Transfer(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<Transfer>(info),
      out_arg_(info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : -1),
      in_arg_(info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : -1),
      offset_(info[2].IsNumber() ? info[2].As<Napi::Number>().Int64Value() : -1),
      remaining_(info[3].IsNumber() ? info[3].As<Napi::Number>().Int64Value() : -1),
      chunk_(info[4].IsNumber() ? info[4].As<Napi::Number>().Int64Value() : 0) {
  Napi::Env env = info.Env();
  if (out_arg_ < 0 || in_arg_ < 0 || offset_ < 0 || remaining_ < 0 || chunk_ <= 0) {
    Napi::TypeError::New(env, "Transfer(outFd, inFd, offset, length, chunkSize, onProgress?)")
        .ThrowAsJavaScriptException();
    return;
  }
  if (info[5].IsFunction()) on_progress_ = Napi::Persistent(info[5].As<Napi::Function>());
  if (info[6].IsBuffer()) {
    Napi::Buffer<char> head = info[6].As<Napi::Buffer<char>>();
    head_ = head.Data();
    head_length_ = head.Length();
    if (head_length_ > 0) head_ref_ = Napi::Persistent(head);
  }
}

Napi::Value Transfer::Start(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (state_ != State::kCreated) {
    Napi::Error::New(env, "Transfer already started").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  deferred_ = std::make_unique<Napi::Promise::Deferred>(env);
  Napi::Promise promise = deferred_->Promise();
  Ref();
  referenced_ = true;

  if (napi_get_uv_event_loop(env, &loop_) != napi_ok) {
    Finish(Napi::Error::New(env, "zcopy: no event loop").Value());
  } else if (!SendEagerly()) {
    if (int err = OpenDescriptors()) {
      Finish(SystemError(env, err, "sendfile").Value());
    } else if (!HasWork()) {
      Finish(Napi::Value());
    } else {
      QueueChunk();
    }
  }
  ReleaseIfDone();
  return promise;
}

// A cached range to a non-blocking socket or pipe goes out right now, from the
// event loop, on the caller's descriptors (nothing can close them during this
// call, so no private dups are needed unless the transfer has to wait). Returns
// false when the normal path must run instead; an error before any byte moved is
// left for it to report.
bool Transfer::SendEagerly() {
  if (!IsNonBlockingStream(out_arg_) || !RangeCached(in_arg_, offset_, std::min(remaining_, kEagerLimit))) {
    return false;
  }
  result_ = RunChunk(out_arg_, in_arg_, kEagerLimit);
  const bool moved = result_.head_moved > 0 || result_.moved > 0;
  if (result_.error != 0 && !moved) return false;
  const bool finished = result_.error != 0 || result_.eof || !HasWork(result_);
  if (!finished) {
    if (int err = OpenDescriptors()) {
      Finish(SystemError(Env(), err, "sendfile").Value());
      return true;
    }
  }
  OnChunkDone();
  return true;
}

int Transfer::OpenDescriptors() {
  if (int err = OpenSource(in_arg_, &in_)) return err;
  return OpenSink(out_arg_, &out_, &sink_);
}

Napi::Value Transfer::HeadWritten(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(head_written_));
}

// Whether the promise is already settled: true when start() sent everything (or
// failed) from the event loop, so there is nothing left to cancel.
Napi::Value Transfer::Settled(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), state_ == State::kDone);
}

void Transfer::Abort(const Napi::CallbackInfo& info) {
  if (state_ == State::kDone || state_ == State::kCreated) return;
  aborted_.store(true, std::memory_order_relaxed);
  if (state_ == State::kPolling) {
    uv_poll_stop(&poll_);
    Finish(AbortedError(info.Env()).Value());
    ReleaseIfDone();
  }
  // kWorking: the pool job stops at its next sendfile call and AfterWork settles.
}

// The async context gives uv callbacks a proper callback scope (microtasks,
// async_hooks); only transfers that leave the current call need one.
void Transfer::EnsureAsyncContext() {
  if (!async_context_) async_context_ = std::make_unique<Napi::AsyncContext>(Env(), "ZcopySendfile");
}

void Transfer::QueueChunk() {
  EnsureAsyncContext();
  state_ = State::kWorking;
  work_.data = this;
  int err = uv_queue_work(loop_, &work_, WorkCallback, AfterWorkCallback);
  if (err != 0) Finish(SystemError(Env(), -err, "uv_queue_work").Value());
}

void Transfer::WaitWritable() {
  EnsureAsyncContext();
  int err = 0;
  if (!poll_open_) {
    err = uv_poll_init(loop_, &poll_, out_.Get());
    if (err == 0) {
      poll_open_ = true;
      poll_.data = this;
    }
  }
  if (err == 0) err = uv_poll_start(&poll_, UV_WRITABLE, PollCallback);
  if (err != 0) {
    Finish(SystemError(Env(), -err, "uv_poll").Value());
    return;
  }
  state_ = State::kPolling;
}

// Writes what is left of the head. False when it is not all out: the destination
// is full, failed, or the transfer was aborted (`result` says which).
bool Transfer::WriteHead(int out, ChunkResult* result) const {
  // MSG_MORE: the socket holds the head back to share a packet with the file.
  const int flags = MSG_NOSIGNAL | (remaining_ > 0 ? MSG_MORE : 0);
  while (head_written_ + result->head_moved < head_length_) {
    if (aborted_.load(std::memory_order_relaxed)) return false;
    const size_t written = head_written_ + result->head_moved;
    ssize_t n = send(out, head_ + written, head_length_ - written, flags);
    if (n < 0 && errno == ENOTSOCK) n = write(out, head_ + written, head_length_ - written);
    if (n > 0) {
      result->head_moved += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      result->again = true;
      return false;
    } else {
      result->error = n < 0 ? errno : EIO;
      return false;
    }
  }
  return true;
}

// Writes the rest of the head, then moves at most `max_bytes` of the file from
// `in` to `out`, never waiting for a full destination. Runs on a pool thread, or
// on the event loop for the eager path.
Transfer::ChunkResult Transfer::RunChunk(int out, int in, int64_t max_bytes) const {
  ChunkResult result;
  if (!WriteHead(out, &result)) return result;
  const int64_t limit = std::min(remaining_, max_bytes);
  off_t offset = static_cast<off_t>(offset_);
  while (result.moved < limit && !aborted_.load(std::memory_order_relaxed)) {
    size_t count = static_cast<size_t>(std::min(limit - result.moved, kMaxSendfileCount));
    ssize_t n = sendfile(out, in, &offset, count);
    if (n > 0) {
      result.moved += n;
    } else if (n == 0) {
      result.eof = true;
      break;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      result.again = true;
      break;
    } else {
      result.error = errno;
      break;
    }
  }
  return result;
}

// Event loop: account for the chunk, then continue, wait, or settle. The caller
// provides the scopes (a JS call, or a uv callback's InLoopScope).
void Transfer::OnChunkDone() {
  Napi::Env env = Env();
  const ChunkResult result = result_;
  head_written_ += result.head_moved;
  offset_ += result.moved;
  remaining_ -= result.moved;
  done_ += result.moved;

  if (result.moved > 0 && !on_progress_.IsEmpty()) {
    on_progress_.Call({Napi::Number::New(env, static_cast<double>(done_))});
    if (env.IsExceptionPending()) {
      aborted_.store(true, std::memory_order_relaxed);
      Finish(env.GetAndClearPendingException().Value());
      return;
    }
  }

  if (result.error != 0) {
    Finish(SystemError(env, result.error, "sendfile").Value());
  } else if (!HasWork()) {
    Finish(Napi::Value());
  } else if (aborted_.load(std::memory_order_relaxed)) {
    Finish(AbortedError(env).Value());
  } else if (result.eof) {
    Finish(TruncatedError(env, offset_, remaining_).Value());
  } else if (result.again && poll_error_ != 0) {
    Finish(SystemError(env, poll_error_, "sendfile").Value());
  } else if (result.again) {
    WaitWritable();
  } else {
    QueueChunk();
  }
}

// Closes every descriptor and handle, then settles the promise.
void Transfer::Finish(Napi::Value error) {
  state_ = State::kDone;
  if (poll_open_) uv_close(reinterpret_cast<uv_handle_t*>(&poll_), PollCloseCallback);
  out_.Reset();
  in_.Reset();
  on_progress_.Reset();
  head_ref_.Reset();
  if (error.IsEmpty()) {
    deferred_->Resolve(Napi::Number::New(Env(), static_cast<double>(done_)));
  } else {
    deferred_->Reject(error);
  }
}

// Lets the wrapper be collected once nothing native refers to it any more.
void Transfer::ReleaseIfDone() {
  if (state_ == State::kDone && !poll_open_ && referenced_) {
    referenced_ = false;
    Unref();
  }
}

void Transfer::WorkCallback(uv_work_t* req) {
  Transfer* self = static_cast<Transfer*>(req->data);
  self->result_ = self->RunChunk(self->out_.Get(), self->in_.Get(), self->chunk_);
}

void Transfer::AfterWorkCallback(uv_work_t* req, int /*status*/) {
  Transfer* self = static_cast<Transfer*>(req->data);
  {
    Napi::HandleScope handle_scope(self->Env());
    Napi::CallbackScope callback_scope(self->Env(), *self->async_context_);
    self->OnChunkDone();
  }
  self->ReleaseIfDone();
}

// libuv reports POLLERR as UV_EBADF; the next sendfile reports the real error
// (EPIPE, ECONNRESET), so a poll error only settles if sendfile cannot say more.
void Transfer::PollCallback(uv_poll_t* handle, int status, int /*events*/) {
  Transfer* self = static_cast<Transfer*>(handle->data);
  uv_poll_stop(handle);
  if (self->aborted_.load(std::memory_order_relaxed)) {
    Napi::Env env = self->Env();
    Napi::HandleScope handle_scope(env);
    Napi::CallbackScope callback_scope(env, *self->async_context_);
    self->Finish(AbortedError(env).Value());
  } else {
    self->poll_error_ = status < 0 ? -status : 0;
    self->QueueChunk();
  }
  self->ReleaseIfDone();
}

void Transfer::PollCloseCallback(uv_handle_t* handle) {
  Transfer* self = static_cast<Transfer*>(handle->data);
  self->poll_open_ = false;
  self->ReleaseIfDone();
}

}  // namespace zcopy
