// The native lane's answer table (see lane.h): answers that JavaScript
// computed, replayed byte for byte, keyed by the exact bytes of what made
// them: the method, the request target, Host, Accept-Encoding, If-None-Match,
// If-Modified-Since and Range (each sent or not). A row is only ever added by JavaScript and leaves on forget(), or
// here when a revalidation finds that its file changed.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plain_allocator.h"
#include "request_head.h"
#include "unique_fd.h"

namespace zcopy {

// The stat a file body was answered on; a revalidation that finds another
// drops the row.
struct RowStat {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const RowStat& other) const {
    return dev == other.dev && ino == other.ino && size == other.size && mtime_ns == other.mtime_ns &&
           ctime_ns == other.ctime_ns;
  }
};

struct AnswerRow {
  uint32_t id = 0;
  std::string key;
  // Status line and the header fields JavaScript set, each with its CRLF,
  // without Date, Connection and Keep-Alive (the lane writes those as Node does).
  std::string head;
  // The body: bytes in memory (sent with the head in one write), or the
  // file's (sent by sendfile from the lane's own descriptor, which is also
  // what a revalidation checks).
  std::string body;
  bool in_memory = false;
  UniqueFd file;
  int64_t file_size = 0;    // the bytes sent from the file
  int64_t file_offset = 0;  // where they start (a 206 of one range)
  RowStat stat;
  int64_t checked_ms = 0;  // the last fstat (or the registration)
  bool has_file = false;
  // A 304: no body and no Content-Length (Node then closes an HTTP/1.0
  // connection even when keep-alive was asked for).
  bool no_body = false;
  uint8_t log_coding = 0;  // the Content-Encoding the access log names (lane-log.js's CODINGS)
  // The file a compressed variant was made from: it may change while the
  // variant's own file does not, so a revalidation checks both.
  UniqueFd source;
  RowStat source_stat;
  bool has_source = false;
  bool gone = false;  // forgotten while a response was still using it
  bool hit = false;   // answered a request since the last TakeHits()
  uint32_t refs = 0;  // RowPtrs to it (the table's and responses' in flight)
};

// A counted reference to a row. The lane runs on its event loop's thread
// alone, so the count is a plain integer: std::shared_ptr's atomic count reads
// glibc's __libc_single_threaded (GLIBC_2.32), above the prebuilds' floor
// (scripts/elf.js).
class RowPtr {
 public:
  RowPtr() = default;
  RowPtr(std::nullptr_t) {}  // NOLINT: as shared_ptr converts from nullptr
  RowPtr(const RowPtr& other) : row_(other.row_) { Hold(); }
  RowPtr(RowPtr&& other) noexcept : row_(other.row_) { other.row_ = nullptr; }
  RowPtr& operator=(RowPtr other) noexcept {
    std::swap(row_, other.row_);
    return *this;
  }
  ~RowPtr() { Release(); }

  // A new row, held by the RowPtr returned.
  static RowPtr Make() {
    RowPtr made;
    made.row_ = new AnswerRow();
    made.Hold();
    return made;
  }

  AnswerRow* operator->() const { return row_; }
  AnswerRow& operator*() const { return *row_; }
  bool operator==(std::nullptr_t) const { return row_ == nullptr; }
  bool operator!=(std::nullptr_t) const { return row_ != nullptr; }

 private:
  void Hold() {
    if (row_ != nullptr) row_->refs++;
  }
  void Release() {
    if (row_ != nullptr && --row_->refs == 0) delete row_;
    row_ = nullptr;
  }

  AnswerRow* row_ = nullptr;
};
using RowIds = std::vector<uint32_t, PlainAllocator<uint32_t>>;

// The key of a request, from the buffer it was parsed from, into *key.
void AnswerKey(std::string* key, RequestMethod method, const char* data, const HeadSpan& target, const HeadSpan& host,
               const HeadSpan& accept_encoding, const HeadSpan& if_none_match, const HeadSpan& if_modified_since,
               const HeadSpan& range);

class AnswerTable {
 public:
  // → the row's id (never 0); replaces a row with the same key.
  uint32_t Add(RowPtr row);
  void Forget(uint32_t id);
  void Clear();
  RowPtr Find(const std::string& key) const;
  bool Has(uint32_t id) const { return by_id_.count(id) != 0; }
  RowPtr Get(uint32_t id) const {
    auto found = by_id_.find(id);
    return found == by_id_.end() ? nullptr : found->second;
  }
  // The rows that answered since the last call, their marks cleared.
  RowIds TakeHits();
  size_t Size() const { return by_key_.size(); }

 private:
  template <typename Key>
  using RowsBy =
      std::unordered_map<Key, RowPtr, std::hash<Key>, std::equal_to<Key>, PlainAllocator<std::pair<const Key, RowPtr>>>;
  RowsBy<std::string> by_key_;
  RowsBy<uint32_t> by_id_;
  uint32_t next_id_ = 1;
};

}  // namespace zcopy
