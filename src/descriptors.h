// What a transfer asks the kernel about the descriptors it is given, and the
// private copies it makes of them: the destination's kind, read once per
// transfer (Describe); the private duplicate of each end (DuplicateSource,
// DuplicateDestination); a TCP destination's unsent limit (LimitUnsent);
// whether a range of the source is in the page cache (RangeCached); and the
// ends a transfer is given as paths, opened on a pool thread (OpenSourcePath,
// OpenDestinationPath) so that a small path-to-path copy costs one thread-pool
// job, open + copy + close, as fs.copyFile does. Plain system calls, no
// Node-API; used by TransferCore (transfer_core.cc).
#pragma once

#include <sys/stat.h>  // S_ISREG and friends; the stat itself is FileStat()

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "unique_fd.h"

namespace zcopy {

// How the private destination descriptor takes bytes; decided once, at start.
enum class Sink {
  kFile,    // regular file or anything blocking: the pool thread writes, bounded per chunk
  kStream,  // non-blocking socket or pipe: EAGAIN waits for writability on the event loop
};

// What the caller's destination descriptor is, read once per transfer (one stat,
// one F_GETFL): whether the event loop may write to it (IsNonBlockingStream),
// how its private duplicate takes bytes (DuplicateDestination), and whether it
// is a socket whose unsent bytes to limit (LimitUnsent).
struct Destination {
  int error = 0;  // errno of the stat or F_GETFL, reported by DuplicateDestination
  unsigned mode = 0;
  bool nonblocking = false;
};

Destination Describe(int fd);

// Private duplicate of the destination `fd` (described by Describe), and how it
// takes bytes: a dup(2), or for a blocking pipe or device a non-blocking reopen
// of it through /proc (a new open file description of the same file).
int DuplicateDestination(int fd, const Destination& destination, UniqueFd* out, Sink* sink);

// Whether the destination is a socket or pipe that never blocks: the only kind
// the eager path writes to from the event loop.
inline bool IsNonBlockingStream(const Destination& destination) {
  return destination.error == 0 && !S_ISREG(destination.mode) && !S_ISBLK(destination.mode) && destination.nonblocking;
}

// Lowers a TCP socket's TCP_NOTSENT_LOWAT to kUnsentLimit, unless it is already
// as low, by the application's choice or the system's. The option belongs to the
// socket, so it stays after the transfer. Called for sockets only (a pipe or a
// file has nothing to ask); a socket that is not TCP, or a kernel without the
// option, is left as it is.
void LimitUnsent(int fd);

// Private duplicate (dup(2)) of the source `fd`. A directory is refused here with EISDIR
// (sendfile would say EINVAL), unless `sent_from` is true: sendfile has already
// read from it, so it is none.
int DuplicateSource(int fd, bool sent_from, UniqueFd* in);

// Whether every page of the range is in the page cache (cachestat(2), Linux
// 6.5+), so that sendfile from it cannot wait for the disk. False when unknown.
bool RangeCached(int fd, int64_t offset, int64_t length);

// What a transfer opens by path, with the source range still to fix (the
// source's size is only known once it is open). Paths are NUL-terminated and
// owned by the caller; null when that end is a descriptor.
struct OpenSpec {
  const char* source_path = nullptr;
  const char* destination_path = nullptr;
  int64_t start = 0;
  int64_t end = -1;  // inclusive; -1: to the end of the file
};

// A path as the JS wrapper received it (UTF-8 or a Buffer's bytes, no NUL:
// lib/engine/pipe-file.js checks), for TransferCore::New to copy; `given` false when
// that end is a descriptor.
struct Path {
  bool given = false;
  const char* data = nullptr;
  size_t length = 0;

  size_t Size() const { return given ? length + 1 : 0; }
  // Copies the bytes and a NUL to *at and moves *at past them; → the copy, or
  // null when not given.
  const char* CopyTo(char** at) const {
    if (!given) return nullptr;
    char* copy = *at;
    if (length > 0) std::memcpy(copy, data, length);
    copy[length] = '\0';
    *at += length + 1;
    return copy;
  }
};

// What OpenSourcePath/OpenDestinationPath did. On success `in`/`out` hold the
// descriptors they opened (a side given as a descriptor stays empty) and
// `length` is the range's length (source path only). `not_regular`: one of the ends it opened is not a regular
// file (a FIFO, a device); the caller hands the descriptors to JavaScript,
// which has the paths for those. `error`/`syscall`/`path` describe a failure,
// after which nothing is left open.
struct OpenedEnds {
  UniqueFd in;
  UniqueFd out;
  int64_t length = -1;
  bool not_regular = false;
  int error = 0;
  const char* syscall = nullptr;
  const char* path = nullptr;
};

// Opens the source path (O_RDONLY), checks it and fixes the range; nothing
// without a source path. Blocking (a FIFO waits for a writer); runs on a pool
// thread.
void OpenSourcePath(const OpenSpec& spec, OpenedEnds* result);

// Then the destination path (O_WRONLY | O_CREAT | O_TRUNC, 0666 & ~umask, as
// fs.open(path, 'w')), only once the source is known good; nothing without a
// destination path. Blocking (a FIFO waits for a reader); pool thread.
void OpenDestinationPath(const OpenSpec& spec, OpenedEnds* result);

}  // namespace zcopy
