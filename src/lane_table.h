// The native lane's answer table (see lane.h): answers that JavaScript
// computed, replayed byte for byte, keyed by the exact bytes of what made
// them: the method, the request target, Host and Accept-Encoding (each sent or
// not). A row is only ever added by JavaScript and leaves on forget(), or here
// when a revalidation finds that its file changed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

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
  int64_t file_size = 0;
  RowStat stat;
  int64_t checked_ms = 0;  // the last fstat (or the registration)
  bool has_file = false;
  bool gone = false;  // forgotten while a response was still using it
  bool hit = false;   // answered a request since the last TakeHits()
};

using RowPtr = std::shared_ptr<AnswerRow>;

// The key of a request, from the buffer it was parsed from.
std::string AnswerKey(RequestMethod method, const char* data, const HeadSpan& target, const HeadSpan& host,
                      const HeadSpan& accept_encoding);

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
  std::vector<uint32_t> TakeHits();
  size_t Size() const { return by_key_.size(); }

 private:
  std::unordered_map<std::string, RowPtr> by_key_;
  std::unordered_map<uint32_t, RowPtr> by_id_;
  uint32_t next_id_ = 1;
};

}  // namespace zcopy
