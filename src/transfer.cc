#include "transfer.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>  // S_ISREG and friends; the stat itself is FileStat()
#include <sys/syscall.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>

#include "copy_range.h"
#include "errors.h"
#include "file_stat.h"
#include "linux_abi.h"
#include "unique_fd.h"

namespace zcopy {

namespace {

// Linux moves at most this much per sendfile(2) call.
constexpr int64_t kMaxSendfileCount = 0x7ffff000;

// At most this much is sent straight from the event loop at a time, when the
// whole of it is in the page cache: small responses then cost no thread-pool
// round trip, and a busy pool none per part of a big one (SendNext).
constexpr int64_t kEagerLimit = 256 * 1024;

// A pool job sending to a socket or pipe that fills waits for it right there
// (poll(2)) for at most this long before handing the wait to the event loop. A
// reader that keeps up frees room well within it, and the job goes on as a plain
// C sendfile loop would, instead of paying a pool→loop→pool round trip (two
// thread wake-ups on a busy machine) for every full socket buffer. A reader that
// does not is left to the event loop (see waits_in_pool_): no thread is parked
// on it, and at most one wait this long is lost for each time it looked fast.
constexpr uint64_t kPoolWaitNs = 1'000'000;

// A pool job sending to a socket or pipe returns after this long (checked
// between sendfile calls of at most `chunk` bytes), so that fs, dns.lookup and
// zlib work queued behind it gets a thread and abort and teardown stay prompt.
// Bounded by time rather than bytes: a job's bytes are what its reader took.
constexpr uint64_t kJobBudgetNs = 4'000'000;

// A TCP destination of a transfer longer than this keeps at most this much
// unsent in its send buffer (TCP_NOTSENT_LOWAT: the socket reports writable, and
// takes more, only below it). Without a limit a socket takes up to its whole
// send buffer (4 MiB) beyond what the peer's window lets out, and that backlog
// is transmitted from the peer's ACKs, in the receiver's softirq work rather
// than the sender's; a loopback client then spends a fifth of its time sending
// the server's bytes (measured: 1 MiB to 256 clients, 1.5x the requests per
// second with the limit). Bytes in flight are not limited, only the queue
// behind them, so a long fat path still fills.
constexpr int kUnsentLimit = 256 * 1024;

// Pool jobs to sockets and pipes queued or running, in every environment of the
// process. A job waits in the pool only while it is the only one: the thread
// then has nothing better to do for zcopy, whereas with several transfers under
// way a thread waiting for one reader could be sending for another.
std::atomic<int> stream_jobs{0};

// The size of libuv's thread pool: UV_THREADPOOL_SIZE, 4 when unset, at most
// 1024 (read once, as libuv reads it when the pool starts).
int PoolThreads() {
  static const int threads = [] {
    const char* value = getenv("UV_THREADPOOL_SIZE");
    const int n = value != nullptr ? atoi(value) : 0;
    return n > 0 ? std::min(n, 1024) : 4;
  }();
  return threads;
}

// The pool is busy, for SendNext, from this many stream jobs per thread: with
// one (four jobs for four threads), sending from the event loop lost 9 % of the
// requests per second at 1 MiB with 16 connections over two workers; with two
// it lost nothing there and gained 12 % with 256 (bench/http/compare-builds.js,
// 2026-11-27).
constexpr int kBusyJobsPerThread = 2;

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

// The file type of a descriptor (see file_stat.h).
int FileMode(int fd, unsigned* mode) {
  FileStatus status;
  if (int err = FileStat(fd, &status)) return err;
  *mode = status.mode;
  return 0;
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

// How the private destination descriptor takes bytes; decided once, at start.
enum class Sink {
  kFile,    // regular file or anything blocking: the pool thread writes, bounded per chunk
  kStream,  // non-blocking socket or pipe: EAGAIN waits for writability on the event loop
};

// What the caller's destination descriptor is, read once per transfer (one stat,
// one F_GETFL): whether the event loop may write to it (IsNonBlockingStream),
// how its private dup takes bytes (OpenSink), and whether it is a socket whose
// unsent bytes to limit (LimitUnsent).
struct Destination {
  int error = 0;  // errno of the stat or F_GETFL, reported by OpenSink
  unsigned mode = 0;
  bool nonblocking = false;
};

Destination Describe(int fd) {
  Destination destination;
  if ((destination.error = FileMode(fd, &destination.mode)) != 0) return destination;
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) {
    destination.error = errno;
  } else {
    destination.nonblocking = (flags & O_NONBLOCK) != 0;
  }
  return destination;
}

// Private descriptor for the destination `fd` (described by Describe), and how
// it takes bytes.
int OpenSink(int fd, const Destination& destination, UniqueFd* out, Sink* sink) {
  if (destination.error != 0) return destination.error;
  const unsigned mode = destination.mode;
  if (S_ISREG(mode) || S_ISBLK(mode)) {
    *sink = Sink::kFile;
    return DupCloexec(fd, out);
  }
  if (destination.nonblocking) {
    *sink = Sink::kStream;
    return DupCloexec(fd, out);
  }
  if (!S_ISSOCK(mode) && ReopenNonBlocking(fd, out) == 0) {
    *sink = Sink::kStream;
    return 0;
  }
  // A blocking socket (Node never makes one) or a pipe /proc cannot reopen:
  // written with blocking calls from the pool, one bounded chunk per job.
  *sink = Sink::kFile;
  return DupCloexec(fd, out);
}

// Whether the destination is a socket or pipe that never blocks: the only kind
// the eager path writes to from the event loop.
bool IsNonBlockingStream(const Destination& destination) {
  return destination.error == 0 && !S_ISREG(destination.mode) && !S_ISBLK(destination.mode) &&
         destination.nonblocking;
}

// The system's TCP_NOTSENT_LOWAT (net.ipv4.tcp_notsent_lowat), which a socket
// without its own follows; read once. Unlimited when it cannot be read.
unsigned SystemUnsentLimit() {
  static const unsigned limit = [] {
    unsigned value = UINT32_MAX;
    if (FILE* file = std::fopen("/proc/sys/net/ipv4/tcp_notsent_lowat", "re")) {
      if (std::fscanf(file, "%u", &value) != 1) value = UINT32_MAX;
      std::fclose(file);
    }
    return value;
  }();
  return limit;
}

// Lowers a TCP socket's TCP_NOTSENT_LOWAT to kUnsentLimit, unless it is already
// as low, by the application's choice or the system's. The option belongs to the
// socket, so it stays after the transfer. Called for sockets only (a pipe or a
// file has nothing to ask); a socket that is not TCP, or a kernel without the
// option, is left as it is.
void LimitUnsent(int fd) {
  int own = 0;  // 0: none of its own, the system's applies
  socklen_t size = sizeof own;
  if (getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &own, &size) != 0) return;
  const unsigned current = own != 0 ? static_cast<unsigned>(own) : SystemUnsentLimit();
  if (current <= static_cast<unsigned>(kUnsentLimit)) return;
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &kUnsentLimit, sizeof kUnsentLimit);
}

// Private descriptor for the source. A directory is refused here with EISDIR
// (sendfile would say EINVAL), unless `sent_from` is true: sendfile has already
// read from it, so it is none.
int OpenSource(int fd, bool sent_from, UniqueFd* in) {
  if (!sent_from) {
    unsigned mode = 0;
    if (int err = FileMode(fd, &mode)) return err;
    if (S_ISDIR(mode)) return EISDIR;
  }
  return DupCloexec(fd, in);
}

// A handle scope plus, when the transfer has an async context, a callback scope
// (microtasks, async_hooks) for code that runs from a libuv callback.
class LoopScope {
 public:
  LoopScope(napi_env env, napi_async_context context) : env_(env) {
    if (napi_open_handle_scope(env, &handle_scope_) != napi_ok) handle_scope_ = nullptr;
    napi_value resource = nullptr;
    if (context != nullptr && napi_create_object(env, &resource) == napi_ok &&
        napi_open_callback_scope(env, resource, context, &callback_scope_) != napi_ok) {
      callback_scope_ = nullptr;
    }
  }
  ~LoopScope() {
    if (callback_scope_ != nullptr) napi_close_callback_scope(env_, callback_scope_);
    if (handle_scope_ != nullptr) napi_close_handle_scope(env_, handle_scope_);
  }
  LoopScope(const LoopScope&) = delete;
  LoopScope& operator=(const LoopScope&) = delete;

 private:
  napi_env env_;
  napi_handle_scope handle_scope_ = nullptr;
  napi_callback_scope callback_scope_ = nullptr;
};

}  // namespace

// ---------------------------------------------------------------------------
// The per-environment registry of transfers that libuv holds (a queued pool job
// or an open poll handle). Plain heap memory, created at module Init, freed by
// its own cleanup hook once the environment is closing and the last transfer
// has let go of libuv; napi instance data could be freed before that.

class TransferCore;

struct EnvRegistry {
  napi_env env = nullptr;
  uv_loop_t* loop = nullptr;
  napi_async_cleanup_hook_handle hook = nullptr;
  TransferCore* first = nullptr;
  bool closing = false;

  void Add(TransferCore* core);
  void Remove(TransferCore* core);  // may delete the registry
  void DeleteIfDone();

  static void OnEnvTeardown(napi_async_cleanup_hook_handle handle, void* data);
};

// ---------------------------------------------------------------------------

class TransferCore {
 public:
  // The head's bytes, and the paths of ends to open (see OpenSpec), are copied
  // into the same allocation: the pool thread never reads JS memory. Null when
  // out of memory.
  static TransferCore* New(EnvRegistry* registry, int out, int in, int64_t offset, int64_t length,
                           int64_t chunk, const char* head, size_t head_length, const Path& source_path,
                           const Path& destination_path, int64_t end) {
    const size_t paths = source_path.Size() + destination_path.Size();
    void* memory = ::operator new(sizeof(TransferCore) + head_length + paths, std::nothrow);
    if (memory == nullptr) return nullptr;
    auto* core = new (memory) TransferCore(registry, out, in, offset, length, chunk, head_length);
    if (head_length > 0) std::memcpy(core->HeadBytes(), head, head_length);
    char* at = core->HeadBytes() + head_length;
    core->open_spec_.source_path = source_path.CopyTo(&at);
    core->open_spec_.destination_path = destination_path.CopyTo(&at);
    core->open_spec_.start = offset;
    core->open_spec_.end = end;
    core->opens_ = source_path.given || destination_path.given;
    return core;
  }

  TransferCore(const TransferCore&) = delete;
  TransferCore& operator=(const TransferCore&) = delete;

  void SetProgress(napi_env env, napi_value callback) {
    if (napi_create_reference(env, callback, 1, &on_progress_) != napi_ok) on_progress_ = nullptr;
  }

  napi_value Start(napi_env env);
  void Abort(napi_env env);
  // The JS wrapper is gone; a running transfer goes on and settles its promise.
  void Detach() { Release(); }

  size_t head_written() const { return head_written_; }
  bool settled() const { return state_ == State::kDone; }
  // The descriptors this transfer opened by path and kept for JavaScript (see
  // Finish), now the caller's; -1 for none.
  void TakeOpened(int* in, int* out) {
    *in = state_ == State::kDone && open_spec_.source_path != nullptr ? in_.Release() : -1;
    *out = state_ == State::kDone && open_spec_.destination_path != nullptr ? out_.Release() : -1;
  }

 private:
  friend struct EnvRegistry;

  enum class State : uint8_t { kCreated, kStarting, kWorking, kPolling, kDone };
  enum class Outcome : uint8_t { kDone, kAborted, kSystemError, kTruncated, kThrown, kNotRegular };
  // A transfer given paths opens them in its first pool job (kOpening). An abort
  // that comes while that job has not got past opening the source (a FIFO
  // waiting for a writer) takes the job over (kAbandoned): the promise settles
  // at once, and the job closes the source when its open() returns, and opens
  // nothing more. Otherwise the job owns the transfer from then on (kOpened):
  // the destination is created or truncated before the promise settles, never
  // after, and not at all after an abort. One atomic decides, on either thread.
  enum OpenPhase : uint8_t { kNoOpen, kOpening, kOpened, kAbandoned };

  // What one pool job did; written on the pool thread, read in AfterWork.
  struct ChunkResult {
    size_t head_moved = 0;  // bytes of the head written
    int64_t moved = 0;      // bytes of the file sent
    int error = 0;          // errno of a failed sendfile
    bool eof = false;       // the source ended before the range did
    bool again = false;     // the destination is full (EAGAIN)
    bool slow = false;      // a wait in the pool timed out: the reader is slow
  };

  TransferCore(EnvRegistry* registry, int out, int in, int64_t offset, int64_t length, int64_t chunk,
               size_t head_length)
      : registry_(registry),
        env_(registry->env),
        out_arg_(out),
        in_arg_(in),
        offset_(offset),
        remaining_(length),
        chunk_(chunk),
        head_length_(head_length) {}

  ~TransferCore() { DropNapi(); }

  char* HeadBytes() { return reinterpret_cast<char*>(this + 1); }
  const char* HeadBytes() const { return reinterpret_cast<const char*>(this + 1); }

  // Lifetime: one hold for the JS wrapper, one per libuv owner (queued work,
  // open poll handle). The last release deletes the core.
  void Retain() { ++holds_; }
  void Release() {
    if (--holds_ == 0) {
      this->~TransferCore();
      ::operator delete(this);
    }
  }
  // A libuv owner let go: leaves the registry once libuv holds nothing.
  void LibuvReleased() {
    if (!work_pending_ && !poll_open_ && registered_) {
      registered_ = false;
      registry_->Remove(this);
    }
    Release();
  }
  void Register() {
    if (!registered_) {
      registered_ = true;
      registry_->Add(this);
    }
  }

  int OpenDescriptors();
  bool SendEagerly(napi_env env);
  void QueueChunk(napi_env env);
  void SendNext(napi_env env);
  void WaitWritable(napi_env env);
  void EnsureAsyncContext(napi_env env);
  ChunkResult RunChunk(int out, int in, int64_t max_bytes, uint64_t deadline = 0, bool may_wait = false);
  bool OpenInPool();
  void CloseIfFinished();
  // Whether a failure leaves the descriptors this transfer opened to JavaScript
  // (lib/pipe-file.js copies with them when the kernel cannot).
  bool KeepsForJs(int error, int64_t moved) const {
    return opens_ && open_error_ == 0 && IsUnsupported(error) && done_ + moved == 0;
  }
  bool WriteHead(int out, ChunkResult* result) const;
  bool HasWork(const ChunkResult& pending) const {
    return remaining_ > pending.moved || head_written_ + pending.head_moved < head_length_;
  }
  bool HasWork() const { return HasWork(ChunkResult()); }
  bool Aborted() const { return aborted_.load(std::memory_order_relaxed); }
  void OnChunkDone(napi_env env);
  void Finish(napi_env env, Outcome outcome, int error = 0, const char* syscall = nullptr,
              napi_value thrown = nullptr);
  void ClosePoll();
  void DropNapi();
  void OnEnvClosing();

  static void WorkCallback(uv_work_t* req);
  static void AfterWorkCallback(uv_work_t* req, int status);
  static void PollCallback(uv_poll_t* handle, int status, int events);
  static void PollCloseCallback(uv_handle_t* handle);

  EnvRegistry* const registry_;
  const napi_env env_;
  TransferCore* prev_ = nullptr;  // registry links
  TransferCore* next_ = nullptr;

  const int out_arg_;
  const int in_arg_;
  int64_t offset_;
  int64_t remaining_;
  int64_t done_ = 0;
  const int64_t chunk_;
  const size_t head_length_;
  size_t head_written_ = 0;

  UniqueFd out_;
  UniqueFd in_;
  Destination destination_;  // out_arg_ described at start, when it is given
  bool source_sent_from_ = false;  // the eager path moved file bytes from in_arg_
  Sink sink_ = Sink::kFile;
  CopyMethod method_ = CopyMethod::kSendfile;  // see CopyChunk

  // Ends given as paths (opens_), opened by the first pool job; what that open
  // found is written there and read on the event loop after it.
  OpenSpec open_spec_;
  bool opens_ = false;
  std::atomic<uint8_t> open_phase_{kNoOpen};
  bool not_regular_ = false;
  int open_error_ = 0;
  const char* open_syscall_ = nullptr;
  const char* open_path_ = nullptr;

  State state_ = State::kCreated;
  std::atomic<bool> aborted_{false};
  int holds_ = 1;  // the wrapper's
  bool registered_ = false;
  bool work_pending_ = false;
  bool poll_open_ = false;
  bool poll_closing_ = false;
  bool env_closing_ = false;
  int poll_error_ = 0;  // errno of the last failed writability wait
  // Whether a pool job may wait for a full socket or pipe (kPoolWaitNs): yes
  // once the event loop saw the destination writable again within kPoolWaitNs
  // of waiting for it, no after a wait in the pool timed out. Not at first: a
  // response that fits in the socket buffer never waits, and a reader of
  // unknown speed (a client busy with other connections) costs no pool time.
  bool waits_in_pool_ = false;
  uint64_t poll_started_ = 0;  // uv_hrtime() when the loop began to wait

  napi_ref on_progress_ = nullptr;
  napi_deferred deferred_ = nullptr;
  napi_async_context async_context_ = nullptr;

  uv_work_t work_{};
  uv_poll_t poll_{};
  ChunkResult result_;
  // The head's bytes follow the object (see New).
};

// ---------------------------------------------------------------------------
// Registry

void EnvRegistry::Add(TransferCore* core) {
  core->prev_ = nullptr;
  core->next_ = first;
  if (first != nullptr) first->prev_ = core;
  first = core;
}

void EnvRegistry::Remove(TransferCore* core) {
  if (core->prev_ != nullptr) core->prev_->next_ = core->next_;
  else first = core->next_;
  if (core->next_ != nullptr) core->next_->prev_ = core->prev_;
  core->prev_ = core->next_ = nullptr;
  DeleteIfDone();
}

void EnvRegistry::DeleteIfDone() {
  if (!closing || first != nullptr) return;
  napi_remove_async_cleanup_hook(hook);  // lets the environment's teardown go on
  delete this;
}

// The environment is being torn down: its JS will never run again. Every
// transfer libuv holds is aborted; poll handles are closed now, pool jobs end at
// their next sendfile call. The hook is removed when the last one has let go.
void EnvRegistry::OnEnvTeardown(napi_async_cleanup_hook_handle /*handle*/, void* data) {
  auto* self = static_cast<EnvRegistry*>(data);
  self->closing = true;
  napi_handle_scope scope = nullptr;
  if (napi_open_handle_scope(self->env, &scope) != napi_ok) scope = nullptr;
  for (TransferCore* core = self->first; core != nullptr;) {
    TransferCore* next = core->next_;
    core->OnEnvClosing();
    core = next;
  }
  if (scope != nullptr) napi_close_handle_scope(self->env, scope);
  self->DeleteIfDone();
}

// ---------------------------------------------------------------------------
// TransferCore

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
    if (int err = OpenDescriptors()) {
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
      if (int err = OpenDescriptors()) {
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
    if (int err = OpenDescriptors()) result_.error = err;
  }
  OnChunkDone(env);
  return true;
}

// Private dups of the ends given as descriptors (an end given as a path is
// opened later, in the pool). A destination that is a file takes copy_file_range.
int TransferCore::OpenDescriptors() {
  if (in_arg_ >= 0) {
    if (int err = OpenSource(in_arg_, source_sent_from_, &in_)) return err;
  }
  if (out_arg_ >= 0) {
    if (int err = OpenSink(out_arg_, destination_, &out_, &sink_)) return err;
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
TransferCore::ChunkResult TransferCore::RunChunk(int out, int in, int64_t max_bytes, uint64_t deadline,
                                                 bool may_wait) {
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
void TransferCore::Finish(napi_env env, Outcome outcome, int error, const char* syscall,
                          napi_value thrown) {
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
  if (self->open_phase_.load(std::memory_order_acquire) == kOpening && !self->OpenInPool()) return;
  if (self->sink_ == Sink::kStream) {
    // A socket or pipe takes what its reader frees: bounded by time, not bytes.
    self->result_ = self->RunChunk(self->out_.Get(), self->in_.Get(), self->remaining_,
                                   uv_hrtime() + kJobBudgetNs, self->waits_in_pool_);
  } else {
    self->result_ = self->RunChunk(self->out_.Get(), self->in_.Get(), self->chunk_);
  }
  self->CloseIfFinished();
}

// Pool thread, first job of a transfer given paths: opens them (copy_range.cc).
// False when there is nothing to copy: the open failed, found a FIFO or a
// device, or an abort took the transfer over meanwhile.
bool TransferCore::OpenInPool() {
  OpenedEnds ends;
  OpenSourceEnd(open_spec_, &ends);
  uint8_t opening = kOpening;
  if (!open_phase_.compare_exchange_strong(opening, kOpened, std::memory_order_acq_rel)) {
    return false;  // abandoned: `ends` closes the source; the rest is the event loop's
  }
  if (Aborted()) return false;  // `ends` closes the source; the destination is left alone
  OpenDestinationEnd(open_spec_, &ends);
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

// ---------------------------------------------------------------------------
// The JS wrapper

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
