// openBeneath(dirFd, relativePath) → Promise<{ fd, link }>
//
// `fd`: a new descriptor for `relativePath` resolved below `dirFd` by the kernel:
// openat2(dirFd, relativePath, { flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC |
// O_NOCTTY, resolve: RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS }). `..` above
// the directory, an absolute path, a symlink leading out (EXDEV) and /proc magic
// links (ELOOP) are refused; O_NONBLOCK keeps a FIFO from blocking the pool
// thread (the caller fstat's the descriptor and refuses what is not a regular
// file). `link`: whether the path's last component was a symbolic link (the
// open tries O_NOFOLLOW first, and follows the link when that fails with ELOOP),
// what the open-file cache would otherwise ask an lstat(2) on another pool round
// trip. Rejects with a Node-style system error (code, negative errno, syscall
// 'openat2', path). Where the kernel has no openat2 the first call rejects with
// ENOSYS and later ones do at once, without a pool round trip.
//
// lookupBeneath(dirFd, relativePath, name, dirName)
//   → Promise<{ fd, link } | { directory } | null>
//
// A miss's whole lookup in one pool job, where it took three round trips: the
// stat(2) of `name` (the file's absolute name, as fs.stat takes it; its failure
// rejects with fs.stat's error: syscall 'stat', path `name`); then, only for a
// regular file, the stat of `dirName`, which must still name the directory
// `dirFd` is (a deploy may have swapped it); then openBeneath's open. A name
// that is no regular file resolves `{ directory }` (whether it is a directory,
// as fs.stat's isDirectory() tells), having opened nothing: all a lookup needs
// of it. Resolves null, having opened nothing, when `dirName` names another
// directory now: the caller looks up as before. Open errors reject as
// openBeneath's.
//
// Both run as napi_async_work: Node waits for them at environment teardown and
// then calls the completion with JS unavailable; a descriptor that cannot be
// handed to JS is closed there, never leaked.
#include "open_beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "errors.h"
#include "file_stat.h"
#include "linux_abi.h"
#include "unique_fd.h"

namespace zcopy {

namespace {

std::atomic<bool> openat2_missing{false};

struct OpenJob {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  int dir_fd = -1;
  std::string path;
  // lookupBeneath's: the names to stat first (empty for openBeneath).
  std::string name;
  std::string dir_name;
  // What the job found; kNotRun until Execute runs (it may not: the
  // environment can go away first).
  enum class Outcome {
    kNotRun,
    kOpened,           // `fd`, `link`
    kFailed,           // `error`: the open's, or the stat of `name`'s (`stat_failed`)
    kLookedElsewhere,  // lookupBeneath: the root's name names another directory; resolves null
    kNotFile,          // lookupBeneath: no regular file, no directory; resolves { directory: false }
    kDirectory,        // lookupBeneath: a directory; resolves { directory: true }
  };
  Outcome outcome = Outcome::kNotRun;
  int fd = -1;
  bool link = false;
  int error = 0;
  bool stat_failed = false;
};

// The descriptor, or -1 and `*error`. `*link`: the last component was a symbolic
// link. ELOOP under O_NOFOLLOW also comes from a loop or a magic link on the way,
// which the second open meets again; an open that succeeds the second time had a
// link last (or the name was swapped for one in between: told as a link).
int OpenBeneath(int dir_fd, const char* path, bool* link, int* error) {
  const uint64_t flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  int fd = OpenAt2Beneath(dir_fd, path, flags | O_NOFOLLOW);
  if (fd < 0 && errno == ELOOP) {
    *link = true;
    fd = OpenAt2Beneath(dir_fd, path, flags);
  }
  if (fd < 0) {
    *error = errno;
    if (*error == ENOSYS) openat2_missing.store(true, std::memory_order_relaxed);
    return -1;
  }
  return fd;
}

// lookupBeneath's stats: false, with the job's outcome, when there is nothing
// to open.
bool WorthOpening(OpenJob* job) {
  using Outcome = OpenJob::Outcome;
  FileStatus file;
  job->error = PathStat(job->name.c_str(), &file);
  if (job->error != 0) {
    job->stat_failed = true;
    job->outcome = Outcome::kFailed;
    return false;
  }
  if (!S_ISREG(file.mode)) {
    job->outcome = S_ISDIR(file.mode) ? Outcome::kDirectory : Outcome::kNotFile;
    return false;
  }
  FileStatus named;
  FileStatus dir;
  if (PathStat(job->dir_name.c_str(), &named) != 0 || FileStat(job->dir_fd, &dir) != 0 || named.dev != dir.dev ||
      named.ino != dir.ino) {
    job->outcome = Outcome::kLookedElsewhere;
    return false;
  }
  return true;
}

void Execute(napi_env /*env*/, void* data) {
  using Outcome = OpenJob::Outcome;
  auto* job = static_cast<OpenJob*>(data);
  if (!job->name.empty() && !WorthOpening(job)) return;
  if (openat2_missing.load(std::memory_order_relaxed)) {
    job->error = ENOSYS;
    job->outcome = Outcome::kFailed;
    return;
  }
  job->fd = OpenBeneath(job->dir_fd, job->path.c_str(), &job->link, &job->error);
  job->outcome = job->fd >= 0 ? Outcome::kOpened : Outcome::kFailed;
}

// lookupBeneath's { directory } for a name that is no regular file.
napi_value KindOf(napi_env env, bool is_directory) {
  napi_value value = nullptr;
  napi_value directory = nullptr;
  if (napi_create_object(env, &value) != napi_ok || napi_get_boolean(env, is_directory, &directory) != napi_ok ||
      napi_set_named_property(env, value, "directory", directory) != napi_ok) {
    return nullptr;
  }
  return value;
}

// openBeneath's and lookupBeneath's { fd, link } for an opened file.
napi_value Opened(napi_env env, int fd, bool link) {
  napi_value value = nullptr;
  napi_value number = nullptr;
  napi_value is_link = nullptr;
  if (napi_create_object(env, &value) != napi_ok || napi_create_int32(env, fd, &number) != napi_ok ||
      napi_get_boolean(env, link, &is_link) != napi_ok ||
      napi_set_named_property(env, value, "fd", number) != napi_ok ||
      napi_set_named_property(env, value, "link", is_link) != napi_ok) {
    return nullptr;
  }
  return value;
}

// On the event loop, or during the environment's teardown (JS unavailable: the
// resolve fails and the descriptor is closed here).
void Complete(napi_env env, napi_status /*status*/, void* data) {
  using Outcome = OpenJob::Outcome;
  auto* job = static_cast<OpenJob*>(data);
  UniqueFd fd(job->fd);
  napi_value value = nullptr;
  switch (job->outcome) {
    case Outcome::kOpened:
      value = Opened(env, fd.Get(), job->link);
      if (value != nullptr && napi_resolve_deferred(env, job->deferred, value) == napi_ok) {
        fd.Release();  // JS owns it now
      }
      break;
    case Outcome::kLookedElsewhere:
      if (napi_get_null(env, &value) == napi_ok) napi_resolve_deferred(env, job->deferred, value);
      break;
    case Outcome::kNotFile:
    case Outcome::kDirectory:
      value = KindOf(env, job->outcome == Outcome::kDirectory);
      if (value != nullptr) napi_resolve_deferred(env, job->deferred, value);
      break;
    case Outcome::kNotRun:
    case Outcome::kFailed: {
      const int error = job->outcome == Outcome::kNotRun ? ECANCELED : job->error;
      value = job->stat_failed ? SystemError(env, error, "stat", job->name.c_str())
                               : SystemError(env, error, "openat2", job->path.c_str());
      if (value != nullptr || napi_get_undefined(env, &value) == napi_ok) {
        napi_reject_deferred(env, job->deferred, value);
      }
      break;
    }
  }
  napi_delete_async_work(env, job->work);
  delete job;
}

std::string Describe(const Napi::Value& value) {
  if (value.IsNull()) return "null";
  if (value.IsUndefined()) return "undefined";
  if (value.IsNumber()) return "type number (" + value.ToString().Utf8Value() + ")";
  if (value.IsString()) return "type string";
  if (value.IsBoolean()) return "type boolean";
  if (value.IsFunction()) return "function";
  if (value.IsObject()) return "an instance of Object";
  return "type " + std::string(value.IsSymbol() ? "symbol" : value.IsBigInt() ? "bigint" : "unknown");
}

void Throw(Napi::Env env, napi_status (*thrower)(napi_env, const char*, const char*), const char* code,
           const std::string& message) {
  thrower(env, code, message.c_str());
}

// A descriptor argument: an integer in [0, INT32_MAX]. Otherwise throws the
// TypeError/RangeError Node throws for one and returns false.
bool ToFd(Napi::Env env, const Napi::Value& value, const char* name, int* fd) {
  if (!value.IsNumber()) {
    Throw(env, napi_throw_type_error, "ERR_INVALID_ARG_TYPE",
          std::string("The \"") + name + "\" argument must be of type number. Received " + Describe(value));
    return false;
  }
  const double number = value.As<Napi::Number>().DoubleValue();
  if (!(number >= 0 && number <= 2147483647.0) || std::floor(number) != number) {
    Throw(env, napi_throw_range_error, "ERR_OUT_OF_RANGE",
          std::string("The value of \"") + name +
              "\" is out of range. It must be an integer >= 0 && <= 2147483647. Received " +
              value.ToString().Utf8Value());
    return false;
  }
  *fd = static_cast<int>(number);
  return true;
}

// A path argument: a string without null bytes. Otherwise throws the TypeError
// Node throws for one and returns false.
bool ToPath(Napi::Env env, const Napi::Value& value, const char* name, std::string* path) {
  if (!value.IsString()) {
    Throw(env, napi_throw_type_error, "ERR_INVALID_ARG_TYPE",
          std::string("The \"") + name + "\" argument must be of type string. Received " + Describe(value));
    return false;
  }
  *path = value.As<Napi::String>().Utf8Value();
  if (path->find('\0') != std::string::npos) {
    Throw(env, napi_throw_type_error, "ERR_INVALID_ARG_VALUE",
          std::string("The argument '") + name + "' must be a string without null bytes.");
    return false;
  }
  return true;
}

// Queues `job` (its arguments set), → the promise it settles. `name`: the async
// resource's type.
Napi::Value Queue(Napi::Env env, OpenJob* job, const char* name) {
  napi_deferred deferred = nullptr;
  napi_value promise = nullptr;
  if (napi_create_promise(env, &deferred, &promise) != napi_ok) {
    delete job;
    return env.Undefined();
  }
  int error = openat2_missing.load(std::memory_order_relaxed) ? ENOSYS : 0;
  napi_value resource_name = nullptr;
  if (error == 0) {
    job->deferred = deferred;
    if (napi_create_string_latin1(env, name, NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
        napi_create_async_work(env, nullptr, resource_name, Execute, Complete, job, &job->work) != napi_ok ||
        napi_queue_async_work(env, job->work) != napi_ok) {
      if (job->work != nullptr) napi_delete_async_work(env, job->work);
      error = EAGAIN;
    }
  }
  if (error != 0) {
    napi_value reason = SystemError(env, error, "openat2", job->path.c_str());
    if (reason == nullptr) napi_get_undefined(env, &reason);
    napi_reject_deferred(env, deferred, reason);
    delete job;
  }
  return Napi::Value(env, promise);
}

OpenJob* NewJob(Napi::Env env) {
  auto* job = new (std::nothrow) OpenJob();
  if (job == nullptr) Throw(env, napi_throw_error, "ERR_MEMORY_ALLOCATION_FAILED", "Out of memory");
  return job;
}

Napi::Value OpenBeneathJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dir_fd = -1;
  std::string path;
  if (!ToFd(env, info[0], "dirFd", &dir_fd) || !ToPath(env, info[1], "relativePath", &path)) return env.Undefined();
  OpenJob* job = NewJob(env);
  if (job == nullptr) return env.Undefined();
  job->dir_fd = dir_fd;
  job->path = std::move(path);
  return Queue(env, job, "ZcopyOpenBeneath");
}

Napi::Value LookupBeneathJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int dir_fd = -1;
  std::string path;
  std::string name;
  std::string dir_name;
  if (!ToFd(env, info[0], "dirFd", &dir_fd) || !ToPath(env, info[1], "relativePath", &path) ||
      !ToPath(env, info[2], "name", &name) || !ToPath(env, info[3], "dirName", &dir_name)) {
    return env.Undefined();
  }
  if (name.empty() || dir_name.empty()) {
    Throw(env, napi_throw_type_error, "ERR_INVALID_ARG_VALUE", "The arguments 'name' and 'dirName' must not be empty.");
    return env.Undefined();
  }
  OpenJob* job = NewJob(env);
  if (job == nullptr) return env.Undefined();
  job->dir_fd = dir_fd;
  job->path = std::move(path);
  job->name = std::move(name);
  job->dir_name = std::move(dir_name);
  return Queue(env, job, "ZcopyLookupBeneath");
}

// close(fd): closes a descriptor openBeneath gave. In a Worker, Node counts the
// descriptors its fs opened and warns when fs.close() closes one it did not.
Napi::Value CloseJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = -1;
  if (!ToFd(env, info[0], "fd", &fd)) return env.Undefined();
  // close() releases the descriptor on Linux even when it fails: never retried.
  if (close(fd) != 0 && errno != EINTR) {
    napi_value error = SystemError(env, errno, "close", nullptr);
    if (error != nullptr) napi_throw(env, error);
  }
  return env.Undefined();
}

}  // namespace

int OpenAt2Beneath(int dir_fd, const char* path, uint64_t flags) {
  OpenHow how{};
  how.flags = flags;
  how.resolve = kResolveBeneath | kResolveNoMagiclinks;
  // EAGAIN: the walk met a `..` while a rename or a mount anywhere on the system
  // moved on, and the kernel could not prove it stayed beneath; openat2(2) leaves
  // the retry to the caller. Retried a bounded number of times, so renames
  // elsewhere (a deploy, another tenant) do not fail an open, and a storm of
  // them cannot hold a pool thread: past the bound the EAGAIN is the answer.
  constexpr int kRetriesAfterRace = 64;
  int races = 0;
  long fd;
  do {
    fd = syscall(__NR_openat2, dir_fd, path, &how, sizeof(how));
  } while (fd < 0 && (errno == EINTR || (errno == EAGAIN && races++ < kRetriesAfterRace)));
  return static_cast<int>(fd);
}

Napi::Function CloseFunction(Napi::Env env) {
  return Napi::Function::New(env, CloseJs, "close");
}

Napi::Function OpenBeneathFunction(Napi::Env env) {
  return Napi::Function::New(env, OpenBeneathJs, "openBeneath");
}

Napi::Function LookupBeneathFunction(Napi::Env env) {
  return Napi::Function::New(env, LookupBeneathJs, "lookupBeneath");
}

}  // namespace zcopy
