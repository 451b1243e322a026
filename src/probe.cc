// probeKernel(scratchDir) → { sendfile, copy_file_range, openat2, cachestat,
//                             preadv2_nowait }, each { present: boolean, code }
//
// Asks the kernel itself, by making each call for real on two unlinked scratch
// files in `scratchDir` (nothing outside them is read or written):
//
//   sendfile         64 KiB from one scratch file to the other
//   copy_file_range  the same, in the kernel (raw syscall: glibc 2.27-2.29
//                    emulated it in user space, which would hide a missing one)
//   openat2          the directory itself with RESOLVE_BENEATH, and `..` from it,
//                    which must be refused with EXDEV
//   cachestat        the page-cache state of the scratch file
//   preadv2_nowait   preadv2(RWF_NOWAIT) from the scratch file: a read that may
//                    not wait for the disk (EAGAIN also means supported)
//
// `present` is true when the call did its job. Otherwise `code` is the errno
// name it failed with: ENOSYS (this kernel lacks it), EPERM (a seccomp profile
// refuses it), EOPNOTSUPP/EINVAL (not for this kind of file), ... Throws a
// Node-style system error when the scratch files cannot be made.
#include "probe.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "errors.h"
#include "linux_abi.h"
#include "open_beneath.h"
#include "unique_fd.h"

namespace zcopy {

namespace {

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

constexpr size_t kProbeBytes = 64 * 1024;

// What one probe found: error 0 means present.
struct Finding {
  int error = 0;
  const char* code = nullptr;  // set instead of `error` for a result no errno describes
};

Finding FromResult(long result) {
  return Finding{result < 0 ? errno : 0, nullptr};
}

// An unlinked file in `dir`, open read-write; sets *error on failure.
UniqueFd ScratchFile(const std::string& dir, int* error) {
  std::string name = dir + "/.zcopy-probe-XXXXXX";
  std::vector<char> path(name.begin(), name.end());
  path.push_back('\0');
  UniqueFd fd(mkostemp(path.data(), O_CLOEXEC));
  if (!fd.Valid()) {
    *error = errno;
    return fd;
  }
  unlink(path.data());
  return fd;
}

int Fill(int fd) {
  std::vector<char> bytes(kProbeBytes);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

Finding ProbeSendfile(int from, int to) {
  off_t offset = 0;
  return FromResult(sendfile(to, from, &offset, kProbeBytes));
}

Finding ProbeCopyFileRange(int from, int to) {
  int64_t in_offset = 0;
  int64_t out_offset = 0;
  return FromResult(syscall(__NR_copy_file_range, from, &in_offset, to, &out_offset, kProbeBytes, 0U));
}

Finding ProbeOpenat2(int dir_fd) {
  const uint64_t flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  UniqueFd self(OpenAt2Beneath(dir_fd, ".", flags));
  if (!self.Valid()) return Finding{errno, nullptr};
  UniqueFd parent(OpenAt2Beneath(dir_fd, "..", flags));
  if (parent.Valid()) {
    return Finding{0, "RESOLVE_BENEATH_IGNORED"};
  }
  return errno == EXDEV ? Finding{} : Finding{errno, nullptr};
}

Finding ProbeCachestat(int fd) {
  CachestatRange range{0, 0};  // len 0: to the end of the file
  Cachestat stat{};
  return FromResult(syscall(__NR_cachestat, fd, &range, &stat, 0U));
}

Finding ProbePreadv2Nowait(int fd) {
  char byte[1];
  iovec iov{byte, sizeof(byte)};
  long n;
  do {
    // Raw syscall, offset 0 as (low, high): glibc's wrapper is from 2.26.
    n = syscall(__NR_preadv2, fd, &iov, 1, 0UL, 0UL, RWF_NOWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return Finding{};  // supported; the page was not cached
  return FromResult(n);
}

void Set(Napi::Object result, const char* name, Finding finding) {
  Napi::Env env = result.Env();
  Napi::Object entry = Napi::Object::New(env);
  const bool present = finding.error == 0 && finding.code == nullptr;
  entry.Set("present", Napi::Boolean::New(env, present));
  if (present) {
    entry.Set("code", env.Null());
  } else {
    entry.Set("code", Napi::String::New(env, finding.code != nullptr ? finding.code : uv_err_name(-finding.error)));
  }
  result.Set(name, entry);
}

void ThrowSystemError(Napi::Env env, int error, const char* syscall, const std::string& path) {
  napi_value value = SystemError(env, error, syscall, path.c_str());
  if (value != nullptr) napi_throw(env, value);
}

Napi::Value ProbeKernelJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "The \"scratchDir\" argument must be of type string.");
    return env.Undefined();
  }
  const std::string dir = info[0].As<Napi::String>().Utf8Value();
  if (dir.empty() || dir.find('\0') != std::string::npos) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "The argument 'scratchDir' must be a non-empty path.");
    return env.Undefined();
  }

  UniqueFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.Valid()) {
    ThrowSystemError(env, errno, "open", dir);
    return env.Undefined();
  }
  int error = 0;
  UniqueFd from = ScratchFile(dir, &error);
  UniqueFd to;
  if (error == 0) to = ScratchFile(dir, &error);
  if (error != 0) {
    ThrowSystemError(env, error, "mkostemp", dir);
    return env.Undefined();
  }
  error = Fill(from.Get());
  if (error != 0) {
    ThrowSystemError(env, error, "write", dir);
    return env.Undefined();
  }

  Napi::Object result = Napi::Object::New(env);
  Set(result, "sendfile", ProbeSendfile(from.Get(), to.Get()));
  Set(result, "copy_file_range", ProbeCopyFileRange(from.Get(), to.Get()));
  Set(result, "openat2", ProbeOpenat2(dir_fd.Get()));
  Set(result, "cachestat", ProbeCachestat(from.Get()));
  Set(result, "preadv2_nowait", ProbePreadv2Nowait(from.Get()));
  return result;
}

}  // namespace

Napi::Function ProbeKernelFunction(Napi::Env env) {
  return Napi::Function::New(env, ProbeKernelJs, "probeKernel");
}

}  // namespace zcopy
