// fstat and stat for the addon. Through libuv (statx(2), falling back to fstat where a
// seccomp profile refuses statx) rather than glibc's fstat, which since glibc
// 2.33 is a symbol of that version: the prebuilt binaries must load on glibc
// 2.28 (Debian 11, Ubuntu 20.04, RHEL 8). A request without a callback is
// synchronous and never touches a loop.
#pragma once

#include <uv.h>

#include <cstdint>

namespace zcopy {

struct FileStatus {
  unsigned mode = 0;  // st_mode: type and permissions
  int64_t size = 0;
  uint64_t dev = 0;
  uint64_t ino = 0;
};

// `rc`: the request's result; → 0, or the errno value (positive) of the failure.
inline int Settle(uv_fs_t* req, int rc, FileStatus* status) {
  if (rc == 0) {
    status->mode = static_cast<unsigned>(req->statbuf.st_mode);
    status->size = static_cast<int64_t>(req->statbuf.st_size);
    status->dev = req->statbuf.st_dev;
    status->ino = req->statbuf.st_ino;
  }
  uv_fs_req_cleanup(req);
  return rc < 0 ? -rc : 0;
}

// 0, or the errno value (positive) of the failure.
inline int FileStat(int fd, FileStatus* status) {
  uv_fs_t req;
  return Settle(&req, uv_fs_fstat(nullptr, &req, fd, nullptr), status);
}

// stat(2) of a name, as fs.stat takes it (symbolic links followed): 0, or the
// errno value (positive) of the failure.
inline int PathStat(const char* path, FileStatus* status) {
  uv_fs_t req;
  return Settle(&req, uv_fs_stat(nullptr, &req, path, nullptr), status);
}

}  // namespace zcopy
