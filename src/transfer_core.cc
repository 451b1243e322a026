#include "transfer_core.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>  // S_ISSOCK
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>

#include "errors.h"
#include "loop_scope.h"
#include "tuning.h"

namespace zcopy {

namespace {

// Pool jobs to sockets and pipes queued or running, in every environment of the
// process. A job waits in the pool only while it is the only one: the thread
// then has nothing better to do for zcopy, whereas with several transfers under
// way a thread waiting for one reader could be sending for another.
std::atomic<int> stream_jobs{0};

}  // namespace

napi_value TransferCore::Start(napi_env env) {
  if (state_ != State::kCreated) {
    napi_throw_error(env, nullptr, "Transfer already started");
    return nullptr;
  }
  napi_value promise = nullptr;
  if (napi_create_promise(env, &deferred_, &promise) != napi_ok) return nullptr;
  state_ = State::kStarting;

  if (!Aborted() && out_arg_ >= 0) destination_ = Describe(out_arg_);
  if (Aborted()) {
    Finish(env, Outcome::kAborted);
  } else if (opens_) {
    // Ends to open first: the whole of a small copy is then one pool job.
    if (int err = DuplicateDescriptors()) {
      Finish(env, Outcome::kSystemError, err, "sendfile");
    } else {
      open_phase_.store(kOpening, std::memory_order_relaxed);
      QueueChunk(env);
    }
  } else {
    if (remaining_ > kUnsentLimit && destination_.error == 0 && S_ISSOCK(destination_.mode)) {
      LimitUnsent(out_arg_);
    }
    if (!SendEagerly(env)) {
      if (int err = DuplicateDescriptors()) {
        Finish(env, Outcome::kSystemError, err, "sendfile");
      } else if (!HasWork()) {
        Finish(env, Outcome::kDone);
      } else {
        QueueChunk(env);
      }
    }
  }
  if (state_ == State::kDone) DropNapi();
  return promise;
}

// A cached range to a non-blocking socket or pipe goes out right now, from the
// event loop, on the caller's descriptors (nothing can close them during this
// call, so no private dups are needed unless the transfer has to wait). Returns
// false when the normal path must run instead; an error before any byte moved is
// left for it to report.
bool TransferCore::SendEagerly(napi_env env) {
  if (!IsNonBlockingStream(destination_) || !RangeCached(in_arg_, offset_, std::min(remaining_, kEagerLimit))) {
    return false;
  }
  result_ = RunChunk(out_arg_, in_arg_, kEagerLimit);
  source_sent_from_ = result_.moved > 0;
  const bool moved = result_.head_moved > 0 || result_.moved > 0;
  if (result_.error != 0 && !moved) return false;
  const bool finished = result_.error != 0 || result_.eof || !HasWork(result_);
  if (!finished) {
    // No dups (EMFILE, ENFILE): the transfer fails, after what moved is
    // accounted and reported, so that the caller can send the rest another way.
    if (int err = DuplicateDescriptors()) result_.error = err;
  }
  OnChunkDone(env);
  return true;
}

// Private dups of the ends given as descriptors (an end given as a path is
// opened later, in the pool). A destination that is a file takes copy_file_range.
int TransferCore::DuplicateDescriptors() {
  if (in_arg_ >= 0) {
    if (int err = DuplicateSource(in_arg_, source_sent_from_, &in_)) return err;
  }
  if (out_arg_ >= 0) {
    if (int err = DuplicateDestination(out_arg_, destination_, &out_, &sink_)) return err;
  }
  if (sink_ == Sink::kFile) method_ = CopyMethod::kCopyFileRange;
  return 0;
}

// One abort path for every state. Called from JS only.
void TransferCore::Abort(napi_env env) {
  switch (state_) {
    case State::kCreated:
    case State::kStarting:
      // Remembered: start() settles at once; an abort from onProgress during the
      // eager path is seen right after the callback returns.
      aborted_.store(true, std::memory_order_relaxed);
      break;
    case State::kWorking: {
      // The pool job stops at its next sendfile call (or never runs) and
      // AfterWork settles.
      aborted_.store(true, std::memory_order_relaxed);
      if (work_pending_) uv_cancel(reinterpret_cast<uv_req_t*>(&work_));
      uint8_t opening = kOpening;
      if (open_phase_.compare_exchange_strong(opening, kAbandoned, std::memory_order_acq_rel)) {
        // Still opening: the job will touch none of in_/out_ (the dups made at
        // start) and close what it opens itself.
        Finish(env, Outcome::kAborted);
        DropNapi();
      }
      break;
    }
    case State::kPolling:
      aborted_.store(true, std::memory_order_relaxed);
      uv_poll_stop(&poll_);
      Finish(env, Outcome::kAborted);
      DropNapi();
      break;
    case State::kDone:
      break;
  }
}

// The async context gives uv callbacks a proper callback scope (microtasks,
// async_hooks); only transfers that leave the current call need one.
void TransferCore::EnsureAsyncContext(napi_env env) {
  if (async_context_ != nullptr) return;
  napi_value name = nullptr;
  napi_value resource = nullptr;
  if (napi_create_string_latin1(env, "ZcopySendfile", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_object(env, &resource) != napi_ok ||
      napi_async_init(env, resource, name, &async_context_) != napi_ok) {
    async_context_ = nullptr;
  }
}

void TransferCore::QueueChunk(napi_env env) {
  EnsureAsyncContext(env);
  result_ = ChunkResult();
  work_.data = this;
  if (sink_ == Sink::kStream) stream_jobs.fetch_add(1, std::memory_order_relaxed);
  int err = uv_queue_work(registry_->loop, &work_, WorkCallback, AfterWorkCallback);
  if (err != 0) {
    if (sink_ == Sink::kStream) stream_jobs.fetch_sub(1, std::memory_order_relaxed);
    Finish(env, Outcome::kSystemError, -err, "uv_queue_work");
    return;
  }
  state_ = State::kWorking;
  work_pending_ = true;
  Retain();
  Register();
}

void TransferCore::WaitWritable(napi_env env) {
  EnsureAsyncContext(env);
  int err = 0;
  if (!poll_open_) {
    err = uv_poll_init(registry_->loop, &poll_, out_.Get());
    if (err == 0) {
      poll_open_ = true;
      poll_.data = this;
      Retain();
      Register();
    }
  }
  if (err == 0) err = uv_poll_start(&poll_, UV_WRITABLE, PollCallback);
  if (err != 0) {
    Finish(env, Outcome::kSystemError, -err, "uv_poll");
    return;
  }
  state_ = State::kPolling;
  poll_started_ = uv_hrtime();
}

// Writes what is left of the head. False when it is not all out: the destination
// is full, failed, or the transfer was aborted (`result` says which).
bool TransferCore::WriteHead(int out, ChunkResult* result) const {
  // MSG_MORE: the socket holds the head back to share a packet with the file.
  const int flags = MSG_NOSIGNAL | (remaining_ > 0 ? MSG_MORE : 0);
  const char* head = HeadBytes();
  while (head_written_ + result->head_moved < head_length_) {
    if (Aborted()) return false;
    const size_t written = head_written_ + result->head_moved;
    ssize_t n = send(out, head + written, head_length_ - written, flags);
    if (n < 0 && errno == ENOTSOCK) n = write(out, head + written, head_length_ - written);
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

// Pool thread: waits for a full `out` to take more, at most kPoolWaitNs and not
// past `deadline`. True when it can, or has an error for the next sendfile to
// report; false when the wait should go to the event loop.
static bool WaitInPool(int out, uint64_t deadline, bool* slow) {
  const uint64_t now = uv_hrtime();
  if (now >= deadline) return false;
  const uint64_t wait = std::min(deadline - now, kPoolWaitNs);
  pollfd fd{out, POLLOUT, 0};
  const timespec timeout{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
  const int n = ppoll(&fd, 1, &timeout, nullptr);
  // A full wait that timed out says the reader is slow; one cut by the deadline does not.
  if (n == 0 && wait == kPoolWaitNs) *slow = true;
  return n > 0 || (n < 0 && errno == EINTR);
}

// Writes the rest of the head, then moves at most `max_bytes` of the file from
// `in` to `out`, in sendfile calls of at most `chunk_` bytes, stopping after the
// first one that ends past `deadline` (0: none). A full destination ends it,
// unless `may_wait`: a pool job then waits for it a little (WaitInPool). Runs on
// a pool thread, or on the event loop for the eager path (which never waits).
TransferCore::ChunkResult TransferCore::RunChunk(int out, int in, int64_t max_bytes, uint64_t deadline, bool may_wait) {
  ChunkResult result;
  if (!WriteHead(out, &result)) return result;
  const int64_t limit = std::min(remaining_, max_bytes);
  const int64_t call_limit = std::min(chunk_, kMaxSendfileCount);
  off_t offset = static_cast<off_t>(offset_);
  while (result.moved < limit && !Aborted()) {
    size_t count = static_cast<size_t>(std::min(limit - result.moved, call_limit));
    ssize_t n = CopyChunk(out, in, &offset, count, &method_);
    if (n > 0) {
      result.moved += n;
      if (deadline != 0 && uv_hrtime() >= deadline) break;
    } else if (n == 0) {
      result.eof = true;
      break;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      const bool alone = stream_jobs.load(std::memory_order_relaxed) == 1;
      if (may_wait && alone && WaitInPool(out, deadline, &result.slow)) continue;
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
// provides the scopes (a JS call, or a uv callback's LoopScope). An abort that
// came before the settle wins, even one from inside onProgress.
void TransferCore::OnChunkDone(napi_env env) {
  const ChunkResult result = result_;
  if (result.slow) waits_in_pool_ = false;
  head_written_ += result.head_moved;
  offset_ += result.moved;
  remaining_ -= result.moved;
  done_ += result.moved;

  if (result.moved > 0 && on_progress_ != nullptr) {
    napi_value callback = nullptr;
    napi_value receiver = nullptr;
    napi_value bytes = nullptr;
    if (napi_get_reference_value(env, on_progress_, &callback) == napi_ok && callback != nullptr &&
        napi_get_undefined(env, &receiver) == napi_ok &&
        napi_create_double(env, static_cast<double>(done_), &bytes) == napi_ok &&
        napi_call_function(env, receiver, callback, 1, &bytes, nullptr) != napi_ok) {
      bool pending = false;
      napi_value thrown = nullptr;
      if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
          napi_get_and_clear_last_exception(env, &thrown) == napi_ok) {
        aborted_.store(true, std::memory_order_relaxed);
        Finish(env, Outcome::kThrown, 0, nullptr, thrown);
        return;
      }
      // No exception: JS cannot run any more (the environment is stopping).
    }
  }

  if (Aborted()) {
    Finish(env, Outcome::kAborted);
  } else if (open_error_ != 0) {
    Finish(env, Outcome::kSystemError, open_error_, open_syscall_);
  } else if (not_regular_) {
    Finish(env, Outcome::kNotRegular);
  } else if (result.error != 0) {
    Finish(env, Outcome::kSystemError, result.error, "sendfile");
  } else if (!HasWork()) {
    Finish(env, Outcome::kDone);
  } else if (result.eof) {
    Finish(env, Outcome::kTruncated);
  } else if (result.again && poll_error_ != 0) {
    Finish(env, Outcome::kSystemError, poll_error_, "sendfile");
  } else if (result.again) {
    WaitWritable(env);
  } else {
    SendNext(env);
  }
}

// The next part of a transfer to a socket or pipe that can take more. From the
// event loop, as nginx sends, when the pool is busy with other transfers (a job
// queued now would wait behind them, and the round trip to a thread and back
// costs more CPU than the sendfile call) and the part is in the page cache;
// from the pool otherwise, where the kernel's copy runs beside the JavaScript
// thread and a disk read costs the loop nothing. On the loop at most
// kEagerLimit per turn: a socket still taking more gets the rest after a turn
// of the loop (its writability wait returns at once). Only zcopy's own jobs
// are counted: what else waits in the pool is not known.
void TransferCore::SendNext(napi_env env) {
  const bool busy = stream_jobs.load(std::memory_order_relaxed) >= kBusyJobsPerThread * PoolThreads();
  if (sink_ != Sink::kStream || !busy || !RangeCached(in_.Get(), offset_, std::min(remaining_, kEagerLimit))) {
    QueueChunk(env);
    return;
  }
  state_ = State::kWorking;  // an abort from onProgress is taken after the callback
  result_ = RunChunk(out_.Get(), in_.Get(), kEagerLimit);
  if (!result_.again && result_.error == 0 && !result_.eof && HasWork(result_)) result_.again = true;
  OnChunkDone(env);
}

void TransferCore::ClosePoll() {
  if (poll_open_ && !poll_closing_) {
    poll_closing_ = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), PollCloseCallback);
  }
}

// Closes every descriptor and handle, then settles the promise. Never called
// while a pool job runs (it uses the descriptors).
void TransferCore::Finish(napi_env env, Outcome outcome, int error, const char* syscall, napi_value thrown) {
  state_ = State::kDone;
  ClosePoll();  // uv_close takes the fd out of epoll at once: the dup may close now
  if (outcome == Outcome::kNotRegular || (outcome == Outcome::kSystemError && KeepsForJs(error, 0))) {
    // What was opened by path goes to JavaScript (TakeOpened); dups close.
    if (open_spec_.destination_path == nullptr) out_.Reset();
    if (open_spec_.source_path == nullptr) in_.Reset();
  } else {
    out_.Reset();
    in_.Reset();
  }
  if (deferred_ == nullptr) return;
  napi_deferred deferred = deferred_;
  deferred_ = nullptr;
  if (outcome == Outcome::kDone) {
    napi_value bytes = nullptr;
    if (napi_create_double(env, static_cast<double>(done_), &bytes) == napi_ok) {
      napi_resolve_deferred(env, deferred, bytes);
    }
    return;
  }
  napi_value reason = nullptr;
  switch (outcome) {
    case Outcome::kAborted:
      reason = AbortedError(env);
      break;
    case Outcome::kSystemError:
      reason = SystemError(env, error, syscall, open_error_ != 0 ? open_path_ : nullptr);
      break;
    case Outcome::kNotRegular:
      reason = NotRegularError(env);
      break;
    case Outcome::kTruncated:
      reason = TruncatedError(env, offset_, remaining_);
      break;
    case Outcome::kThrown:
      reason = thrown;
      break;
    case Outcome::kDone:
      break;
  }
  if (reason == nullptr && napi_get_undefined(env, &reason) != napi_ok) return;
  // Fails only when the environment is stopping; the deferred then goes with it.
  napi_reject_deferred(env, deferred, reason);
}

// Drops what this core holds in the JS environment; called once it is settled
// (outside any callback scope), at environment teardown, and on deletion.
void TransferCore::DropNapi() {
  if (on_progress_ != nullptr) {
    napi_delete_reference(env_, on_progress_);
    on_progress_ = nullptr;
  }
  if (async_context_ != nullptr) {
    napi_async_destroy(env_, async_context_);
    async_context_ = nullptr;
  }
}

// From the environment's cleanup hook: abort without JS. The promise's deferred
// cannot be settled any more; it is left to the dying isolate.
void TransferCore::OnEnvClosing() {
  env_closing_ = true;
  aborted_.store(true, std::memory_order_relaxed);
  deferred_ = nullptr;
  DropNapi();
  if (work_pending_) uv_cancel(reinterpret_cast<uv_req_t*>(&work_));
  ClosePoll();
  if (!work_pending_) {
    state_ = State::kDone;
    out_.Reset();
    in_.Reset();
  }
}

void TransferCore::WorkCallback(uv_work_t* req) {
  auto* self = static_cast<TransferCore*>(req->data);
  if (self->open_phase_.load(std::memory_order_acquire) == kOpening && !self->OpenPathsInPool()) return;
  if (self->sink_ == Sink::kStream) {
    // A socket or pipe takes what its reader frees: bounded by time, not bytes.
    self->result_ = self->RunChunk(self->out_.Get(), self->in_.Get(), self->remaining_, uv_hrtime() + kJobBudgetNs,
                                   self->waits_in_pool_);
  } else {
    self->result_ = self->RunChunk(self->out_.Get(), self->in_.Get(), self->chunk_);
  }
  self->CloseIfFinished();
}

// Pool thread, first job of a transfer given paths: opens them (descriptors.cc).
// False when there is nothing to copy: the open failed, found a FIFO or a
// device, or an abort took the transfer over meanwhile.
bool TransferCore::OpenPathsInPool() {
  OpenedEnds ends;
  OpenSourcePath(open_spec_, &ends);
  uint8_t opening = kOpening;
  if (!open_phase_.compare_exchange_strong(opening, kOpened, std::memory_order_acq_rel)) {
    return false;  // abandoned: `ends` closes the source; the rest is the event loop's
  }
  if (Aborted()) return false;  // `ends` closes the source; the destination is left alone
  OpenDestinationPath(open_spec_, &ends);
  if (open_spec_.source_path != nullptr) {
    in_ = std::move(ends.in);
    if (ends.length >= 0) remaining_ = ends.length;
  }
  if (open_spec_.destination_path != nullptr) out_ = std::move(ends.out);
  open_error_ = ends.error;
  open_syscall_ = ends.syscall;
  open_path_ = ends.path;
  not_regular_ = ends.not_regular;
  return open_error_ == 0 && !not_regular_;
}

// Pool thread: when this job ends the transfer, a file destination's
// descriptors are closed here rather than on the event loop (closing a file
// just written may start its writeback: ext4 does on a truncated file). Not a
// socket's or a pipe's: those may have a poll handle that must go first.
void TransferCore::CloseIfFinished() {
  const ChunkResult& result = result_;
  const bool ends = Aborted() || result.error != 0 || result.eof || !HasWork(result);
  if (sink_ != Sink::kFile || !ends || KeepsForJs(result.error, result.moved)) return;
  out_.Reset();
  in_.Reset();
}

void TransferCore::AfterWorkCallback(uv_work_t* req, int /*status*/) {
  // UV_ECANCELED (an abort or the teardown cancelled a job that had not begun)
  // leaves result_ empty and the abort flag set: OnChunkDone settles as aborted.
  auto* self = static_cast<TransferCore*>(req->data);
  self->work_pending_ = false;
  if (self->sink_ == Sink::kStream) stream_jobs.fetch_sub(1, std::memory_order_relaxed);
  if (self->env_closing_) {
    self->state_ = State::kDone;
    self->ClosePoll();
    self->out_.Reset();
    self->in_.Reset();
  } else if (self->state_ != State::kDone) {  // else an abort settled it while it opened
    {
      LoopScope scope(self->env_, self->async_context_);
      self->OnChunkDone(self->env_);
    }
    if (self->state_ == State::kDone) self->DropNapi();
  }
  self->LibuvReleased();
}

// libuv reports POLLERR as UV_EBADF; the next sendfile reports the real error
// (EPIPE, ECONNRESET), so a poll error only settles if sendfile cannot say more.
void TransferCore::PollCallback(uv_poll_t* handle, int status, int /*events*/) {
  auto* self = static_cast<TransferCore*>(handle->data);
  uv_poll_stop(handle);
  if (self->env_closing_ || self->state_ != State::kPolling) return;
  {
    LoopScope scope(self->env_, self->async_context_);
    if (self->Aborted()) {
      self->Finish(self->env_, Outcome::kAborted);
    } else {
      self->poll_error_ = status < 0 ? -status : 0;
      // Writable again this soon: the reader keeps up, the pool may wait for it.
      if (uv_hrtime() - self->poll_started_ < kPoolWaitNs) self->waits_in_pool_ = true;
      self->SendNext(self->env_);
    }
  }
  if (self->state_ == State::kDone) self->DropNapi();
}

void TransferCore::PollCloseCallback(uv_handle_t* handle) {
  auto* self = static_cast<TransferCore*>(handle->data);
  self->poll_open_ = false;
  self->poll_closing_ = false;
  self->LibuvReleased();
}

}  // namespace zcopy
